#!/usr/bin/env python3
"""CPU emulation check of the suite kernels (issue 17), for a machine without a GPU.

Builds each task's kernel.cu with g++ against scripts/cpu-emu/emu.h (CUDA threads as fibers,
barriers and warp shuffles emulated and checked for divergence), for the defaults, the expert
configurations and a seeded sample of the space, and runs driver.cpp: every output element of the
task's awkward sizes, at aligned and misaligned addresses, against a double-precision reference.
It checks the kernels' index arithmetic, tails, fallbacks and barrier structure -- not speed, not
memory ordering between blocks, not inline PTX (cp.async: the fallback copy is what runs here).

  python3 scripts/cpu-emu/run.py [--tasks softmax,matmul] [--count 12] [--seed 1] [--jobs 2] [--only TILED=2]
  python3 scripts/cpu-emu/run.py --tasks histogram --file reference   # a task's reference.cu (no tunables)
"""
import argparse, json, os, re, subprocess, sys, tempfile, time
from concurrent.futures import ThreadPoolExecutor

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, '..', '..'))
SUITE = ['softmax', 'layernorm', 'transpose', 'reduce_sum', 'matmul']
LAUNCH = re.compile(r'([A-Za-z_][\w:]*)\s*<<<\s*([^,>]+?)\s*,\s*([^,>]+?)\s*(?:,[^>]*)?>>>\s*\(([^;]*?)\)\s*;')

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--tasks', default=','.join(SUITE))
    ap.add_argument('--count', type=int, default=12)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--jobs', type=int, default=os.cpu_count() or 2)
    ap.add_argument('--only', default='', help='sample only configurations with these values (K=V,K=V)')
    ap.add_argument('--file', default='kernel', choices=['kernel', 'reference'], help="the task's kernel.cu (its configurations) or its reference.cu (once)")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix='kd-cpu-emu-')
    jobs = []
    for t in a.tasks.split(','):
        src = open(os.path.join(ROOT, 'resources', 'tasks', t, f'{a.file}.cu')).read()
        pp, n = LAUNCH.subn(lambda m: f'KD_LAUNCH({m.group(2)}, {m.group(3)}, {m.group(1)}({m.group(4)}));', src)
        if n == 0:
            sys.exit(f'{t}: no kernel launch found to rewrite')
        kpath = os.path.join(work, f'{t}-{a.file}.cu')
        open(kpath, 'w').write(pp)
        if a.file == 'reference':
            cfgs = [{'kind': 'reference', 'config': {}}]
        else:
            cfgs = json.loads(subprocess.check_output(['npx', 'tsx', os.path.join(HERE, 'configs.ts'), t, str(a.count), str(a.seed), a.only], cwd=ROOT))
        for i, c in enumerate(cfgs):
            jobs.append((t, kpath, i, c))

    def run(job):
        t, kpath, i, c = job
        exe = os.path.join(work, f'{t}-{i}')
        defs = [f'-D{k}={v}' for k, v in c['config'].items()]
        t0 = time.time()
        b = subprocess.run(['g++', '-std=c++17', '-O2', '-U_FORTIFY_SOURCE', '-w', '-I', os.path.join(HERE, 'include'), f'-DTASK_{t}', f'-DKD_KERNEL="{kpath}"', *(['-DKD_FILE_REFERENCE'] if c['kind'] == 'reference' else []), *defs,
                            os.path.join(HERE, 'driver.cpp'), '-o', exe], capture_output=True, text=True)
        if b.returncode != 0:
            return t, c, False, 'BUILD FAILED\n' + b.stderr[-3000:], time.time() - t0
        try:
            r = subprocess.run([exe], capture_output=True, text=True, timeout=900)
            out = r.stdout + r.stderr
            ok = r.returncode == 0
        except subprocess.TimeoutExpired:
            out, ok = 'TIMEOUT', False
        return t, c, ok, out, time.time() - t0

    fails = 0
    with ThreadPoolExecutor(a.jobs) as ex:
        for t, c, ok, out, s in ex.map(run, jobs):
            cfg = ','.join(f'{k}={v}' for k, v in c['config'].items())
            print(f"{'ok  ' if ok else 'FAIL'} {t:10} {c['kind']:7} {cfg}  ({s:.0f} s)", flush=True)
            if not ok:
                fails += 1
                print('   ' + out.strip().replace('\n', '\n   '), flush=True)
    print(f'{len(jobs)} configurations, {fails} failed')
    sys.exit(1 if fails else 0)

main()
