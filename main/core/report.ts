// A session's run report: markdown (for a pull request), HTML (self-contained, with the plots'
// data embedded and drawn as inline SVG, no scripts) and JSON (everything, for other tools).
import type { ExportFile, SessionDetail, FullVariantRow } from '../contract/api.js';
import { decided, placementsCouldExplain, tiedWords, tieDuelWords } from '../contract/confirm-words.js';

function ms(x: number | null): string {
  if (x === null || !Number.isFinite(x)) return '-';
  return x >= 1 ? `${x.toFixed(3)} ms` : `${(x * 1000).toFixed(2)} µs`;
}

function sp(x: number | null): string {
  return x === null ? '-' : `${x.toFixed(2)}x`;
}

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

function mdCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/[\r\n]+/g, ' ');
}

function topRows(d: SessionDetail<FullVariantRow>, n: number): FullVariantRow[] {
  return d.variants.filter((v) => v.medianMs !== null).sort((a, b) => a.medianMs! - b.medianMs!).slice(0, n);
}

function counts(d: SessionDetail<FullVariantRow>): Record<string, number> {
  const c: Record<string, number> = {};
  for (const v of d.variants) {
    const k = v.status === 'failed' ? `failed (${v.failure?.kind ?? '?'})` : v.status;
    c[k] = (c[k] ?? 0) + 1;
  }
  return c;
}

function cfg(v: FullVariantRow): string {
  const c = Object.entries(v.config).map(([k, x]) => `${k}=${x}`).join(', ');
  return c || '(defaults)';
}

export function renderMarkdown(d: SessionDetail<FullVariantRow>): string {
  const s = d.summary;
  const lines: string[] = [];
  lines.push(`# KernelDuel run report: ${d.task.name}`, '');
  if (d.replay) lines.push(`> **REPLAY**: every timing in this report was answered from the recorded space \`${d.replay.recording}\`, not measured live.`, '');
  lines.push(`- Session: \`${s.id}\` (created ${s.createdAt})`);
  lines.push(`- Task: ${d.task.name} (\`${d.task.dir}\`)`);
  lines.push(`- GPU: ${d.gpu ? `${d.gpu.name} (${d.gpu.arch})` : 'none (compile-only)'}`);
  lines.push(`- Strategy: ${s.strategy}, budget ${s.budget ?? '?'}; status ${s.status ?? '?'}`);
  lines.push(`- Variants: ${d.variants.length}; ${Object.entries(counts(d)).map(([k, n]) => `${n} ${k}`).join(', ')}`);
  const best = d.variants.find((v) => v.id === d.bestId);
  const base = d.variants.find((v) => v.id === d.baselineId);
  lines.push(`- Baseline: ${base ? `${base.id} ${ms(base.medianMs)}` : '-'}`);
  lines.push(`- Best: ${best ? `${best.id} ${ms(best.medianMs)} (${sp(best.speedup)} the baseline), ${cfg(best)}` : 'no variant was timed'}`, '');
  const c = d.confirm;
  if (c) {
    // The figure to report: the precise timing's (kernelduel confirm), beside the search's.
    lines.push('## Confirmation (precise timing)', '', '| variant | search median | precise median | 95% CI | speedup vs the precise baseline | interval |', '|---|---|---|---|---|---|');
    for (const l of [...(c.baseline ? [c.baseline] : []), ...c.variants]) {
      const isBase = l.variantId === c.baseline?.variantId;
      lines.push(`| ${l.variantId}${isBase ? ' (baseline)' : ''} | ${ms(l.searchMs)} | ${l.ms === null ? `FAILED: ${mdCell(l.failure ?? 'not timed')}` : ms(l.ms)} | ${l.ciLowMs !== null ? `${ms(l.ciLowMs)} – ${ms(l.ciHighMs)}${l.placementSd !== null ? ` (placements' sd ${(l.placementSd * 100).toFixed(2)}%)` : ''}` : '-'} | ${isBase ? '1.000x' : l.speedup !== null ? `${l.speedup.toFixed(3)}x` : '-'} | ${l.speedupLow !== null ? `${l.speedupLow.toFixed(3)} – ${l.speedupHigh!.toFixed(3)}` : '-'} |`);
    }
    const cb = c.variants.find((l) => l.variantId === c.bestId);
    lines.push('', `Confirmed best: ${cb ? `${cb.variantId}${cb.gpu ? ` on ${cb.gpu}` : ''}, measured ${cb.at}` : 'none'}${c.searchBestId ? ` (the search ranked ${c.searchBestId} first)` : ''}.${c.tiedWithBest.length && c.bestId ? ` ${tiedWords(c.tiedWithBest, c.reproducibility, c.bestId)}.` : ''}${c.tieDuels.map((d) => ` Duel of ${c.bestId} against ${d.variantId} (${d.pairs} interleaved pairs in one process): ${tieDuelWords(d, c.bestId!)}.`).join('')}`, '');
  }
  const top = topRows(d, 10);
  if (top.length) {
    lines.push('## Fastest variants', '', '| variant | time (median) | 95% CI | speedup | config | regs | smem B |', '|---|---|---|---|---|---|---|');
    for (const v of top) lines.push(`| ${v.id} | ${ms(v.medianMs)} | ${ms(v.ciLowMs)} – ${ms(v.ciHighMs)} | ${sp(v.speedup)} | ${mdCell(cfg(v))} | ${v.registers ?? '-'} | ${v.sharedBytes ?? '-'} |`);
    lines.push('');
  }
  if (d.duels.length) {
    lines.push('## Duels', '', 'The verdict is from the pairs\' 95% interval; where the duel rotated over buffer sets, the interval over the pairs and the placements is given beside it (\\* where it holds 1 against a faster or slower verdict: the placements alone could make that difference; † a duel on one buffer set a side, which met one placement of each variant, so a faster or slower verdict can be the placements\').', '');
    lines.push('| A | B | A over B | 95% CI (pairs) | verdict | pairs | 95% over pairs and placements |', '|---|---|---|---|---|---|---|');
    for (const x of d.duels.slice(-30)) {
      const p = x.placements;
      const flag = p && placementsCouldExplain(x.verdict, p) ? ' \\*' : '';
      lines.push(`| ${x.a} | ${x.b} | ${x.ratio.toFixed(3)}x | ${x.ratioLow.toFixed(3)} – ${x.ratioHigh.toFixed(3)} | ${x.verdict} | ${x.pairs} | ${p ? `${p.low.toFixed(3)} – ${p.high.toFixed(3)}${flag}` : x.sets === 1 ? `one set a side${decided(x.verdict) ? ' †' : ''}` : '-'} |`);
    }
    lines.push('');
  }
  const fails = d.variants.filter((v) => v.status === 'failed').slice(0, 20);
  if (fails.length) {
    lines.push('## Failures', '');
    for (const v of fails) lines.push(`- ${v.id} [${v.failure?.kind}] ${mdCell(v.failure?.reason ?? '')}`);
    lines.push('');
  }
  lines.push('## Best-so-far speedup by evaluation', '', '| evaluation | variant | speedup | best so far |', '|---|---|---|---|');
  for (const p of d.plots.timeline) lines.push(`| ${p.index} | ${p.variantId} | ${sp(p.speedup)} | ${sp(p.bestSpeedup)} |`);
  lines.push('');
  return lines.join('\n');
}

/** A step line of best-so-far speedup as inline SVG (no scripts: the report opens anywhere). */
function svgBestSoFar(d: SessionDetail<FullVariantRow>): string {
  const pts = d.plots.timeline.filter((p) => p.bestSpeedup !== null);
  if (pts.length < 2) return '<p><em>Not enough timed evaluations to plot.</em></p>';
  const W = 640, H = 240, P = 36;
  const maxX = Math.max(...pts.map((p) => p.index), 1);
  const ys = pts.map((p) => p.bestSpeedup!);
  const minY = Math.min(1, ...ys), maxY = Math.max(...ys) * 1.05;
  const x = (i: number): number => P + ((W - 2 * P) * i) / maxX;
  const y = (v: number): number => H - P - ((H - 2 * P) * (v - minY)) / (maxY - minY || 1);
  const path = pts.map((p, i) => `${i ? 'L' : 'M'}${x(p.index).toFixed(1)},${y(p.bestSpeedup!).toFixed(1)}`).join(' ');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" role="img" aria-label="best-so-far speedup">
<rect width="${W}" height="${H}" fill="#fff" stroke="#ccc"/>
<path d="${path}" fill="none" stroke="#2563eb" stroke-width="2"/>
<text x="${P}" y="${P - 10}" font-size="12">best-so-far speedup (max ${maxY / 1.05 > 0 ? (maxY / 1.05).toFixed(2) : '-'}x) vs evaluations (${maxX})</text>
</svg>`;
}

export function renderHtml(d: SessionDetail<FullVariantRow>): string {
  const md = renderMarkdown(d);
  const data = JSON.stringify({ timeline: d.plots.timeline, paramEffects: d.plots.paramEffects, roofline: d.plots.roofline, modelAccuracy: d.plots.modelAccuracy }).replace(/</g, '\\u003c');
  const body = md
    .split('\n')
    .map((l) => {
      if (l.startsWith('# ')) return `<h1>${esc(l.slice(2))}</h1>`;
      if (l.startsWith('## ')) return `<h2>${esc(l.slice(3))}</h2>`;
      if (l.startsWith('> ')) return `<p class="replay">${esc(l.slice(2)).replace(/\*\*(.*?)\*\*/g, '<strong>$1</strong>')}</p>`;
      if (l.startsWith('- ')) return `<li>${esc(l.slice(2)).replace(/`(.*?)`/g, '<code>$1</code>')}</li>`;
      if (l.startsWith('|---')) return '';
      if (l.startsWith('|')) return `<tr>${l.slice(1, -1).split(' | ').map((c) => `<td>${esc(c.trim())}</td>`).join('')}</tr>`;
      return l ? `<p>${esc(l)}</p>` : '';
    })
    .filter(Boolean)
    .join('\n')
    .replace(/((?:<tr>.*<\/tr>\n?)+)/g, '<table>$1</table>');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>KernelDuel report: ${esc(d.task.name)} ${esc(d.summary.id)}</title>
<style>body{font:14px system-ui,sans-serif;max-width:960px;margin:2em auto;color:#111}table{border-collapse:collapse;margin:1em 0}td{border:1px solid #ddd;padding:3px 8px;font-variant-numeric:tabular-nums}.replay{background:#fef3c7;border:2px solid #d97706;padding:8px;font-weight:600}code{background:#f3f4f6;padding:0 3px}</style>
</head><body>
${body}
<h2>Plot</h2>
${svgBestSoFar(d)}
<script type="application/json" id="kernelduel-plot-data">${data}</script>
</body></html>
`;
}

export function renderReport(d: SessionDetail<FullVariantRow>, format: 'md' | 'html' | 'json'): ExportFile {
  const base = `${d.task.name}-${d.summary.id}-report`;
  if (format === 'md') return { fileName: `${base}.md`, content: renderMarkdown(d), mimeType: 'text/markdown' };
  if (format === 'html') return { fileName: `${base}.html`, content: renderHtml(d), mimeType: 'text/html' };
  const { run: _run, ...rest } = d;
  return { fileName: `${base}.json`, content: JSON.stringify({ format: 'kernelduel-report/1', ...rest }, null, 2) + '\n', mimeType: 'application/json' };
}
