#!/usr/bin/env python3
"""How often would a self duel cross the same band by its buffer placements alone, with N sets a side?

Reads a `bench timing-stability` results file whose self duels kept each side's per-set medians
(`duelSides`), pools every set median relative to its duel's mean, and draws N placements a side
(with replacement) many times: the share of draws whose two sides' means differ by more than
--edge (default 0.85%: a duel whose ratio lies there has its pairs' interval crossing the ±1% band).
Resampling of measured set medians, not a measurement; it says what more sets would do if the
placements of a GPU stay as they were measured.

  python3 bench/placement-resample.py bench/results/<file>.json [--sets 4,8,16] [--edge 0.0085] [--draws 200000]
"""
import argparse
import json
import math
import random
import statistics as st

ap = argparse.ArgumentParser()
ap.add_argument('file')
ap.add_argument('--sets', default='4,8,16')
ap.add_argument('--edge', type=float, default=0.0085)
ap.add_argument('--draws', type=int, default=200000)
ap.add_argument('--seed', type=int, default=1)
a = ap.parse_args()
d = json.load(open(a.file))
print(f'# Placement resampling of {a.file}\n')
print(f'Command: `python3 bench/placement-resample.py {a.file} --sets {a.sets} --edge {a.edge} --draws {a.draws} --seed {a.seed}`. '
      'Resampling of measured per-set medians (not a measurement).\n')
print('| task | timing | self duels | set medians | sd of set medians | ' + ' | '.join(f'P(difference > {a.edge * 100:.2f}%), {n} sets a side' for n in map(int, a.sets.split(','))) + ' |')
print('|---|---|---|---|---|' + '---|' * len(a.sets.split(',')))
for r in d['rows']:
    sides = r.get('duelSides') or []
    pool = []
    for x in sides:
        m = st.mean(x['aSetMs'] + x['bSetMs'])
        pool += [v / m for v in x['aSetMs'] + x['bSetMs']]
    if not pool:
        continue
    cells = []
    for n in map(int, a.sets.split(',')):
        rng = random.Random(a.seed)
        bad = sum(1 for _ in range(a.draws) if abs(math.log(st.fmean(rng.choices(pool, k=n)) / st.fmean(rng.choices(pool, k=n)))) > a.edge)
        cells.append(f'{bad / a.draws * 100:.2f}%')
    print(f"| {r['task']} | {r.get('timingLabel') or 'defaults'} | {len(sides)} | {len(pool)} | {st.pstdev(pool) * 100:.2f}% | " + ' | '.join(cells) + ' |')
