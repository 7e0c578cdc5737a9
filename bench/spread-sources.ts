// Reads timing-stability results (bench/timing-stability.ts's JSON) and splits each task's spread over
// fresh processes into what its buffer sets explain and an offset each process shares
// (bench/lib/spread-sources.ts). An analysis of GPU figures already recorded: it measures nothing.
//   npx tsx bench/spread-sources.ts bench/results/h200-timing-stability-db7293b.json ... [--processes 5] [--goal 0.5] [--out FILE.md]
//   npx tsx bench/spread-sources.ts --sd 0.142 [--processes 5] [--goal 0.5]   the normal model alone
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { benchArgs as parseArgs } from './lib/args.js';
import { probRangeWithin, relSdPct, spreadSources } from './lib/spread-sources.js';
import { mean, median } from '../main/engine/measure/stats.js';

const { values, positionals } = parseArgs({ options: { out: { type: 'string' }, processes: { type: 'string', default: '5' }, goal: { type: 'string', default: '0.5' }, sd: { type: 'string' } }, allowPositionals: true });
// --sd SD: the normal model alone, for an sd between processes (%) given by hand.
if (values.sd !== undefined) {
  const sd = Number(values.sd);
  if (!(sd > 0)) throw new Error(`--sd: "${values.sd}" is not a positive sd (%)`);
  const p = 1 - probRangeWithin(Number(values.processes), Number(values.goal) / sd);
  process.stdout.write(`P(range of ${values.processes} > ${values.goal}% | sd ${sd}%) = ${p.toFixed(3)} (1 in ${(1 / p).toFixed(1)}); a normal model, not a measurement\n`);
  process.exit(0);
}
if (!positionals.length) throw new Error('give one or more timing-stability JSON files (or --sd SD for the normal model alone)');
const lines = [
  '# Where the spread over fresh processes comes from (analysis of recorded timing-stability runs)',
  '',
  'No new measurement: the per-set medians each process of these runs recorded (real GPU figures, files named below).',
  'Within: pooled sd of a process\'s per-set medians around its mean (placement, plus sampling noise). Between: sd of the processes\' means.',
  'Explained by the sets: within / √sets. A ratio between / explained well above 1 is an offset a whole process shares, which more sets cannot average out.',
  '',
  '| file | task | timing | sets | spread of the medians | within | between | explained by the sets | between / explained |',
  '|---|---|---|---|---|---|---|---|---|',
];
for (const f of positionals) {
  const d = JSON.parse(readFileSync(f, 'utf8')) as { rows: Array<{ task: string; timingLabel?: string; spreadPct: number | null; processDetails: Array<{ perSetMedianMs?: number[] }> }> };
  for (const r of d.rows) {
    const s = spreadSources(r.processDetails.map((p) => p.perSetMedianMs ?? []));
    const pct = (x: number): string => `${x.toFixed(2)}%`;
    lines.push(`| ${basename(f)} | ${r.task} | ${r.timingLabel ?? '-'} | ${s?.sets ?? '-'} | ${r.spreadPct === null ? '- (a process failed)' : pct(r.spreadPct)} | ${s ? pct(s.withinSdPct) : '-'} | ${s ? pct(s.betweenSdPct) : '-'} | ${s ? pct(s.expectedFromSetsPct) : '-'} | ${s ? (s.betweenSdPct / s.expectedFromSetsPct).toFixed(2) : '-'} |`);
  }
}
// How likely a run meets the goal, from the sd between processes pooled over the files: under a
// normal model, the chance that --processes medians lie within --goal % of each other, per task and
// for every task of a run at once (tasks taken as independent).
const n = Number(values.processes);
const goal = Number(values.goal);
const pooled = new Map<string, { v: number[]; label: string }>();
for (const f of positionals) {
  const d = JSON.parse(readFileSync(f, 'utf8')) as { rows: Array<{ task: string; timingLabel?: string; medians: number[] }> };
  for (const r of d.rows) {
    if (r.medians.length < 2) continue;
    const key = `${r.task}\u0000${r.timingLabel ?? '-'}`;
    const e = pooled.get(key) ?? { v: [], label: r.timingLabel ?? '-' };
    e.v.push(relSdPct(r.medians) ** 2);
    pooled.set(key, e);
  }
}
lines.push('', `## How likely a run of ${n} processes has every task within ${goal}%`, '',
  `The sd between processes (relative sd of the process medians, pooled over the runs above that timed the task the same way) and, for ${n} normal draws of that sd, the chance that their range is at most ${goal}%. A model of the recorded figures, not a measurement.`, '',
  '| task | timing | runs | pooled sd between processes | P(range of ' + n + ' ≤ ' + goal + '%) |', '|---|---|---|---|---|');
const byTiming = new Map<string, { p: number; tasks: number }>();
for (const [key, e] of pooled) {
  const sd = Math.sqrt(e.v.reduce((a, b) => a + b, 0) / e.v.length);
  const p = probRangeWithin(n, goal / sd);
  const t = byTiming.get(e.label) ?? { p: 1, tasks: 0 };
  byTiming.set(e.label, { p: t.p * p, tasks: t.tasks + 1 });
  lines.push(`| ${key.split('\u0000')[0]} | ${e.label} | ${e.v.length} | ${sd.toFixed(3)}% | ${p.toFixed(2)} |`);
}
for (const [label, t] of byTiming) lines.push(`| all ${t.tasks} tasks of this timing at once | ${label} | | | ${t.p.toFixed(2)} |`);
lines.push('', 'An sd from one run of 5-8 processes is known to about ±30%; the pooled default row rests on four runs.');
// Does anything recorded with a process explain its offset? Its deviation from its row's median
// against its place in the row, and against its start temperature and power (centred per row).
interface Proc { dev: number; index: number; temp: number | null; power: number | null }
const procs: Proc[][] = [];
for (const f of positionals) {
  const d = JSON.parse(readFileSync(f, 'utf8')) as { rows: Array<{ processDetails: Array<{ medianMs?: number; clocksStart?: { tempC: number | null; powerW: number | null } }> }> };
  for (const r of d.rows) {
    const ms = r.processDetails.map((p) => p.medianMs).filter((x): x is number => typeof x === 'number');
    if (ms.length < 4 || ms.length !== r.processDetails.length) continue;
    const m = median(ms);
    procs.push(r.processDetails.map((p, index) => ({ dev: (p.medianMs! / m - 1) * 100, index, temp: p.clocksStart?.tempC ?? null, power: p.clocksStart?.powerW ?? null })));
  }
}
/** Standard error of the mean. */
const sem = (xs: number[]): number => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((a, x) => a + (x - m) ** 2, 0) / (xs.length - 1) / xs.length);
};
const corr = (a: number[], b: number[]): number => {
  const ma = mean(a);
  const mb = mean(b);
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  a.forEach((x, i) => {
    sab += (x - ma) * (b[i] - mb);
    saa += (x - ma) ** 2;
    sbb += (b[i] - mb) ** 2;
  });
  return saa && sbb ? sab / Math.sqrt(saa * sbb) : 0;
};
const centred = (key: 'temp' | 'power'): { dev: number[]; x: number[] } => {
  const dev: number[] = [];
  const x: number[] = [];
  for (const row of procs) {
    const ok = row.filter((p) => p[key] !== null);
    if (ok.length < 2) continue;
    const m = mean(ok.map((p) => p[key]!));
    for (const p of ok) {
      dev.push(p.dev);
      x.push(p[key]! - m);
    }
  }
  return { dev, x };
};
if (procs.length) {
  const all = procs.flat();
  const first = all.filter((p) => p.index === 0).map((p) => p.dev);
  const rest = all.filter((p) => p.index > 0).map((p) => p.dev);
  const t = centred('temp');
  const w = centred('power');
  lines.push('', '## What a process\'s offset goes with', '',
    `${all.length} processes in ${procs.length} rows. Deviation of a process's median from its row's median: the first process of a row ${mean(first).toFixed(3)}% on average (± ${sem(first).toFixed(3)}, ${first.length} rows), the others ${mean(rest).toFixed(3)}% (${rest.length}); correlation with the place in the row ${corr(all.map((p) => p.dev), all.map((p) => p.index)).toFixed(2)}, with the GPU's temperature at the start (centred per row) ${corr(t.dev, t.x).toFixed(2)} (${t.dev.length}), with its power at the start ${corr(w.dev, w.x).toFixed(2)} (${w.dev.length}).`);
}
lines.push('', `Generated by \`npx tsx bench/spread-sources.ts ${positionals.join(' ')}\`.`, '');
if (values.out) writeFileSync(values.out, lines.join('\n'));
else process.stdout.write(lines.join('\n'));
