// Where each GPU's time went in the sessions of a pool run (see bench/multi-gpu-lanes.ts).
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { openSessionReadOnly } from '../../main/engine/session/store.js';
import { median } from '../../main/engine/measure/stats.js';

const ms = (iso: string): number => Date.parse(iso);
const f0 = (xs: number[]): string => (xs.length ? Math.round(median(xs)).toString() : '-');
/** One row per session and GPU: median interval between two results on that GPU and its parts; duels split by same GPU / across GPUs. */
export function lanesTable(root: string): string {
  const lines: string[] = [
    `Per GPU of each session under ${root} (medians in ms; an interval runs from one result on that GPU to its next; duels split by whether their sides were first measured on the same GPU):`, '',
    '| session | task | GPUs | GPU | intervals | interval | duel | queued | capture | check | timing | other | duels same GPU (n, median) | duels across GPUs (n, median) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  for (const id of readdirSync(root).sort()) {
    let s;
    try {
      s = openSessionReadOnly(join(root, id));
    } catch {
      continue;
    }
    const results = new Map<string, { t: number; gpu: string; stages: Record<string, number> }>();
    const duelAt = new Map<string, number>();
    const duels: Array<{ a: string; b: string; t: number }> = [];
    for (const e of s.entries()) {
      const r = e.rec;
      if (r.type === 'result') {
        const src = r.result.source;
        results.set(r.variantId, { t: ms(e.t), gpu: src?.kind === 'gpu' ? (src.uuid ?? src.gpu) : '?', stages: (r.result.stages ?? {}) as Record<string, number> });
      } else if (r.type === 'duel') {
        duelAt.set(r.a, ms(e.t));
        duels.push({ a: r.a, b: r.b, t: ms(e.t) });
      }
    }
    const baseline = s.variants().find((v) => v.origin === 'baseline')?.id;
    const byGpu = new Map<string, Array<[string, { t: number; gpu: string; stages: Record<string, number> }]>>();
    for (const [v, r] of results) if (v !== baseline) byGpu.set(r.gpu, [...(byGpu.get(r.gpu) ?? []), [v, r]]);
    for (const [gpu, list] of byGpu) {
      list.sort((x, y) => x[1].t - y[1].t);
      const cols: Record<string, number[]> = { interval: [], duel: [], queued: [], capture: [], check: [], timing: [], other: [] };
      for (let i = 1; i < list.length; i++) {
        const [pv, p] = list[i - 1];
        const [, r] = list[i];
        const st = r.stages;
        const duel = (duelAt.get(pv) ?? p.t) - p.t;
        const parts = (st.queuedMs ?? 0) + (st.captureMs ?? 0) + (st.checkMs ?? 0) + (st.timeMs ?? 0);
        cols.interval.push(r.t - p.t);
        cols.duel.push(duel);
        cols.queued.push(st.queuedMs ?? 0);
        cols.capture.push(st.captureMs ?? 0);
        cols.check.push(st.checkMs ?? 0);
        cols.timing.push(st.timeMs ?? 0);
        cols.other.push(r.t - p.t - duel - parts);
      }
      const mine = duels.filter((d) => results.get(d.a)?.gpu === gpu);
      const same = mine.filter((d) => results.get(d.b)?.gpu === gpu).map((d) => d.t - results.get(d.a)!.t);
      const across = mine.filter((d) => results.get(d.b)?.gpu !== gpu).map((d) => d.t - results.get(d.a)!.t);
      lines.push(`| ${id} | ${s.meta.task.name} | ${byGpu.size} | …${gpu.slice(-4)} | ${cols.interval.length} | ${f0(cols.interval)} | ${f0(cols.duel)} | ${f0(cols.queued)} | ${f0(cols.capture)} | ${f0(cols.check)} | ${f0(cols.timing)} | ${f0(cols.other)} | ${same.length}, ${f0(same)} | ${across.length}, ${f0(across)} |`);
    }
    s.close();
  }
  return lines.join('\n') + '\n';
}
