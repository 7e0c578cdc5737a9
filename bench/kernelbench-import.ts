// Imports every KernelBench problem of the given levels and computes each imported task's reference
// outputs for one seed, on the CPU (the default) or on a GPU (--device cuda), with a per-problem time
// limit; writes <out>/kernelbench-import-cpu.json and .md (CPU) or <out>/<gpu>-kernelbench-import.json
// and .md (e.g. h200-kernelbench-import.*): how many import, how many reference computations
// succeed, and why each failure failed (too slow, too big for this machine's memory, needs CUDA,
// needs a newer torch, the problem's own error).
//
//   KERNELDUEL_PYTHON=/usr/bin/python3 npx tsx bench/kernelbench-import.ts
//   ... --kernelbench ../shared/kernelbench --levels 1,2 --limit-s 30 --max-gib 4 --out bench/results
//   ... --device cuda --jobs 4 --max-gib 24     (on a GPU machine: the bundle's `bench kernelbench-import`)
//   ... --resume    (keeps the problems already done in <out>/<name>.partial.jsonl)
//   ... --again level1/36_RMSNorm_.py,level1/37_FrobeniusNorm_.py   (computes only these again, one at a
//       time, and keeps every other problem's row from <out>/<name>.json)
//
// --jobs N imports and computes N problems at a time (each in its own Python process; on a GPU they
// share it, which is fine: nothing here is timed, the seconds in the files are only the reference
// server's own). The label in the files says which torch, which device and which machine.
import { appendFileSync, existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { pool } from './lib/pool.js';
import { findPython } from '../main/engine/platform/toolchain/python.js';
import { gpuSlug } from '../main/engine/platform/gpu/detect.js';
import { invokedAs } from '../main/engine/base/provenance.js';
import { importProblem, listProblems, type ImportedProblem } from '../main/engine/interop/kernelbench.js';
import { ReferenceFailure, ReferenceServer } from '../main/engine/pytorch/server.js';
import type { RunAnswer } from '../main/engine/pytorch/protocol.js';

interface Args {
  kernelbench: string;
  levels: number[];
  limitS: number;
  maxGiB: number;
  seed: number;
  out: string;
  tasks: string | null;
  resume: boolean;
  again: string[] | null;
  device: 'cpu' | 'cuda';
  jobs: number;
}

function parseArgs(argv: string[]): Args {
  const a: Args = { kernelbench: process.env.KERNELBENCH_DIR ?? '../shared/kernelbench', levels: [1, 2], limitS: 30, maxGiB: 4, seed: 1, out: 'bench/results', tasks: null, resume: false, again: null, device: 'cpu', jobs: 1 };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--kernelbench': a.kernelbench = v; i++; break;
      case '--levels': a.levels = v.split(',').map(Number); i++; break;
      case '--limit-s': a.limitS = Number(v); i++; break;
      case '--max-gib': a.maxGiB = Number(v); i++; break;
      case '--seed': a.seed = Number(v); i++; break;
      case '--out': a.out = v; i++; break;
      case '--tasks': a.tasks = v; i++; break;
      case '--resume': a.resume = true; break;
      case '--again': a.again = v.split(',').map((x) => x.trim()).filter(Boolean); i++; break;
      case '--device':
        if (v !== 'cpu' && v !== 'cuda') throw new Error(`--device: cpu or cuda, not ${v}`);
        a.device = v; i++; break;
      case '--jobs': a.jobs = Math.max(1, Math.floor(Number(v)) || 1); i++; break;
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  return a;
}

type RefOutcome = 'ok' | 'too-slow-on-cpu' | 'too-slow' | 'too-big-for-memory' | 'needs-cuda' | 'needs-newer-torch' | 'random-forward' | 'error' | 'not-imported';

interface Row {
  problem: string;
  task: string;
  imported: boolean;
  importFailure?: ImportedProblem['failure'];
  shapesFrom?: string;
  shapesNote?: string;
  gib?: number;
  warnings: string[];
  reference: { outcome: RefOutcome; why?: string; seconds?: { inputs: number; forward: number }; outputs?: RunAnswer['output_stats'] };
}

const GiB = 2 ** 30;

async function computeReference(r: ImportedProblem, a: Args, python: string): Promise<Row['reference']> {
  if (r.failure) return { outcome: 'not-imported', why: `${r.failure.kind}: ${r.failure.message.split('\n')[0]}` };
  const bytes = r.bytes ?? 0;
  if (bytes > a.maxGiB * GiB) return { outcome: 'too-big-for-memory', why: `${(bytes / GiB).toFixed(1)} GiB of tensors, over the ${a.maxGiB} GiB allowed per problem (--max-gib; ${a.device === 'cpu' ? `this machine has ${(totalmem() / GiB).toFixed(0)} GiB, shared` : `${a.jobs} problem(s) at a time on the GPU`})` };
  let server: ReferenceServer | undefined;
  try {
    server = await ReferenceServer.start({ python, problem: r.file, device: a.device, startTimeoutMs: 120_000, dataBytes: (a.maxGiB * 2 + 2) * GiB });
    const ans = await server.run({ seed: a.seed }, a.limitS * 1000);
    const outcome: RefOutcome = r.randomForward ? 'random-forward' : 'ok';
    return { outcome, ...(outcome === 'random-forward' ? { why: 'computed, but the forward is random (dropout in training mode): no kernel can match it' } : {}), seconds: { inputs: ans.seconds.inputs, forward: ans.seconds.forward }, outputs: ans.output_stats };
  } catch (e) {
    if (!(e instanceof ReferenceFailure)) throw e;
    if (e.kind === 'timeout') return a.device === 'cpu' ? { outcome: 'too-slow-on-cpu', why: `did not finish within ${a.limitS} s (inputs and forward, one torch thread)` } : { outcome: 'too-slow', why: `did not finish within ${a.limitS} s (inputs and forward on the GPU)` };
    if (e.kind === 'oom' || (e.kind === 'crashed' && /SIGKILL/.test(e.message))) return { outcome: 'too-big-for-memory', why: `${e.kind}: ${e.message.split('\n')[0].slice(0, 300)}` };
    if (e.kind === 'needs-cuda') return { outcome: 'needs-cuda', why: e.message.split('\n')[0].slice(0, 300) };
    if (e.kind === 'needs-newer-torch') return { outcome: 'needs-newer-torch', why: e.message.split('\n')[0].slice(0, 300) };
    return { outcome: 'error', why: `${e.kind}: ${e.message.split('\n')[0].slice(0, 400)}` };
  } finally {
    await server?.close();
  }
}

async function main(): Promise<void> {
  const a = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const py = await findPython();
  if (!py.python || !py.can.cpuReference) throw new Error(py.problems.join(' '));
  if (a.device === 'cuda' && !py.can.gpuReference) throw new Error(`--device cuda: ${py.problems.join(' ') || 'this Python\'s torch sees no CUDA device'}`);
  const python = py.python;
  const gpu = a.device === 'cuda' ? (py.devices[0] ?? 'unknown GPU') : null;
  const base = gpu ? `${gpuSlug(gpu)}-kernelbench-import` : 'kernelbench-import-cpu';
  const tasksDir = a.tasks ? resolve(a.tasks) : mkdtempSync(join(tmpdir(), 'kd-kernelbench-'));
  mkdirSync(tasksDir, { recursive: true });
  mkdirSync(a.out, { recursive: true });
  const partial = join(a.out, `${base}.partial.jsonl`);
  // A problem's last line wins (a problem computed again alone appends a second line).
  const finalJson = join(a.out, `${base}.json`);
  let earlier: { command: string; date: string; seconds: number; jobs: number; again: Array<Record<string, unknown>> } | null = null;
  let rows: Row[] = a.resume && existsSync(partial) ? [...new Map(readFileSync(partial, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row).map((r) => [r.problem, r] as const)).values()] : [];
  if (a.again) {
    // Every other problem keeps its row of the last whole run; the named ones are computed again, alone.
    if (!existsSync(finalJson)) throw new Error(`--again needs the last run's ${finalJson}`);
    const p = JSON.parse(readFileSync(finalJson, 'utf8')) as { problems?: Row[]; command?: string; date?: string; seconds?: number; settings?: { jobs?: number }; again?: Array<Record<string, unknown>> };
    const prev = p.problems ?? [];
    const unknown = a.again.filter((p) => !prev.some((r) => r.problem === p));
    if (unknown.length) throw new Error(`--again: ${unknown.join(', ')} not in ${finalJson} (names as level1/36_RMSNorm_.py)`);
    rows = prev.filter((r) => !a.again?.includes(r.problem));
    earlier = { command: p.command ?? '?', date: p.date ?? '?', seconds: p.seconds ?? 0, jobs: p.settings?.jobs ?? 1, again: p.again ?? [] };
    a.jobs = 1;
  }
  if (!a.resume) rmSync(partial, { force: true });
  const done = new Set(rows.map((r) => r.problem));
  const todo: Array<{ level: number; file: string; problem: string }> = [];
  const listed: string[] = [];
  for (const level of a.levels) {
    for (const file of listProblems(join(a.kernelbench, `level${level}`))) {
      const problem = `level${level}/${file.split('/').pop()}`;
      listed.push(problem);
      if (!done.has(problem) && (!a.again || a.again.includes(problem))) todo.push({ level, file, problem });
    }
  }
  const order = new Map(listed.map((p, i) => [p, i]));
  const imported = new Map<string, ImportedProblem>(); // for a problem computed again alone
  await pool(todo, a.jobs, async ({ file, problem }) => {
    const r = await importProblem(file, { python, outDir: tasksDir, force: true, command: 'bench/kernelbench-import.ts' });
    imported.set(problem, r);
    const ref = await computeReference(r, a, python);
    const row: Row = {
      problem,
      task: r.name,
      imported: !r.failure,
      ...(r.failure ? { importFailure: r.failure } : { shapesFrom: r.shapesFrom, shapesNote: r.shapesNote, gib: Number(((r.bytes ?? 0) / GiB).toFixed(3)) }),
      warnings: r.warnings,
      reference: ref,
    };
    rows.push(row);
    appendFileSync(partial, JSON.stringify(row) + '\n');
    process.stderr.write(`${row.problem}: ${row.imported ? `imported (${row.shapesFrom})` : `NOT imported (${r.failure?.kind})`}; reference ${ref.outcome}${ref.seconds ? ` (${(ref.seconds.inputs + ref.seconds.forward).toFixed(1)} s)` : ''}\n`);
  });
  // With several problems at a time, one may run out of memory only because the others hold it:
  // those are computed again alone (on 2026-12-01 two 14 GiB problems did so on the H200 at 6–8 at a time).
  if (a.jobs > 1) {
    for (const row of rows.filter((r) => r.reference.outcome === 'too-big-for-memory' && /^oom|SIGKILL/.test(r.reference.why ?? ''))) {
      const r = imported.get(row.problem); // imported in this run (a resumed row's task folder may be gone)
      if (!r) continue;
      const again = await computeReference(r, a, python);
      row.reference = again.outcome === 'too-big-for-memory' ? { ...again, why: `${again.why ?? ''} (also alone)` } : { ...again, ...(again.why ? {} : { why: `ran out of memory beside ${a.jobs - 1} other problems; alone: ${again.outcome}` }) };
      appendFileSync(partial, JSON.stringify(row) + '\n');
      process.stderr.write(`${row.problem}: again alone: reference ${again.outcome}\n`);
    }
  }
  // Rows in the problems' order (the jobs finish out of order).
  rows.sort((x, y) => (order.get(x.problem) ?? -1) - (order.get(y.problem) ?? -1));
  const count = <T extends string>(xs: T[]): Record<string, number> => xs.reduce<Record<string, number>>((m, x) => ((m[x] = (m[x] ?? 0) + 1), m), {});
  const summary = {
    problems: rows.length,
    imported: rows.filter((r) => r.imported).length,
    importFailures: count(rows.filter((r) => !r.imported).map((r) => r.importFailure?.kind ?? 'unknown')),
    shapesFrom: count(rows.filter((r) => r.imported).map((r) => r.shapesFrom ?? 'unknown')),
    referenceOk: rows.filter((r) => r.reference.outcome === 'ok').length,
    referenceComputedButRandom: rows.filter((r) => r.reference.outcome === 'random-forward').length,
    referenceOutcomes: count(rows.map((r) => r.reference.outcome)),
    // Outputs whose every element is the same for the seed (a check against them proves little).
    constantOutputs: rows.filter((r) => r.warnings.some((w) => /is constant/.test(w)) || (r.reference.outputs ?? []).some((o) => o.std === 0 && (o.elements ?? 0) > 1)).map((r) => r.problem),
    nonFiniteOutputs: rows.filter((r) => (r.reference.outputs ?? []).some((o) => (o.nonfinite ?? 0) > 0)).map((r) => r.problem),
    randomForwards: rows.filter((r) => r.warnings.some((w) => /forward is random/.test(w))).map((r) => r.problem),
  };
  const command = invokedAs(`KERNELDUEL_PYTHON=${py.python} npx tsx bench/kernelbench-import.ts --kernelbench ${a.kernelbench} --levels ${a.levels.join(',')} --limit-s ${a.limitS} --max-gib ${a.maxGiB} --seed ${a.seed}${a.device === 'cuda' ? ' --device cuda' : ''}${a.jobs > 1 ? ` --jobs ${a.jobs}` : ''}${a.again ? ` --again ${a.again.join(',')}` : ''}`);
  const torchName = `torch ${py.torch} (${py.python === '/usr/bin/python3' ? 'Debian python3-torch' : py.python})`;
  const label = gpu ? `GPU ${gpu} (CUDA ${py.cudaVersion}), ${torchName}; measured on a real GPU (nothing timed: the seconds are the reference server's own)` : `CPU, ${torchName}, no GPU`;
  const host = { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memGiB: Number((totalmem() / GiB).toFixed(1)), torchThreads: a.device === 'cpu' ? 'torch default (1 here)' : 'torch default' };
  const now = new Date().toISOString();
  const thisRun = { command, date: now, seconds: (Date.now() - started) / 1000, problems: a.again ?? [] };
  // With --again the file stays the last whole run's (its command, date and settings) and lists the later partial runs.
  const result = earlier
    ? { label, command: earlier.command, date: earlier.date, seconds: earlier.seconds, again: [...earlier.again, thisRun], python: { path: py.python, version: py.version, torch: py.torch, cuda: py.cuda }, host, settings: { device: a.device, jobs: earlier.jobs, seed: a.seed, limitSeconds: a.limitS, maxTensorGiB: a.maxGiB, importRunLimitSeconds: 5, importRunMaxGiB: 1 }, summary, problems: rows }
    : { label, command, date: now, seconds: (Date.now() - started) / 1000, python: { path: py.python, version: py.version, torch: py.torch, cuda: py.cuda }, host, settings: { device: a.device, jobs: a.jobs, seed: a.seed, limitSeconds: a.limitS, maxTensorGiB: a.maxGiB, importRunLimitSeconds: 5, importRunMaxGiB: 1 }, summary, problems: rows };
  writeFileSync(finalJson, JSON.stringify(result, null, 2) + '\n');
  const md = [
    `# KernelBench import and ${gpu ? `reference computation on the GPU (${gpu})` : 'CPU reference computation'}`,
    '',
    `**${label}.** ${host.cpu}, ${host.cores} cores, ${host.memGiB} GiB. Generated ${result.date} in ${(result.seconds / 60).toFixed(0)} min by`,
    '',
    '```',
    result.command,
    '```',
    '',
    ...(earlier ? [...earlier.again, thisRun] : []).map((r) => `Computed again alone on ${String(r.date)}: ${(r.problems as string[]).join(', ')} (\`${String(r.command)}\`).\n`),
    `- Problems: ${summary.problems} (levels ${a.levels.join(', ')} of KernelBench, as in ${a.kernelbench}).`,
    `- Imported: **${summary.imported}** (shapes from a small forward on the CPU: ${summary.shapesFrom.cpu ?? 0}, torch's meta device: ${summary.shapesFrom.meta ?? 0}, extrapolated from smaller batches: ${summary.shapesFrom.scaled ?? 0}). Not imported: ${Object.entries(summary.importFailures).map(([k, v]) => `${v} ${k}`).join(', ') || 'none'}.`,
    `- Reference outputs computed on the ${gpu ? 'GPU' : 'CPU'} for seed ${a.seed} at the problem's own sizes within ${a.limitS} s: **${summary.referenceOk + summary.referenceComputedButRandom}** (${summary.referenceComputedButRandom} of them random forwards: dropout). Outcomes: ${Object.entries(summary.referenceOutcomes).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    `- Outputs constant (every element equal, so a check proves little): ${summary.constantOutputs.join(', ') || 'none among those computed'}. Outputs with non-finite values: ${summary.nonFiniteOutputs.join(', ') || 'none among those computed'}.`,
    `- Random forwards (dropout in training mode; no kernel can match them): ${summary.randomForwards.join(', ') || 'none'}.`,
    '',
    `| problem | imported (shapes) | GiB | reference on ${gpu ? 'GPU' : 'CPU'} | why / seconds |`,
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.problem} | ${r.imported ? r.shapesFrom : `no: ${r.importFailure?.kind}`} | ${r.gib ?? ''} | ${r.reference.outcome} | ${(r.reference.why ?? (r.reference.seconds ? `${(r.reference.seconds.inputs + r.reference.seconds.forward).toFixed(1)} s` : '')).replace(/\|/g, '\\|')} |`),
    '',
  ];
  writeFileSync(join(a.out, `${base}.md`), md.join('\n'));
  rmSync(partial, { force: true });
  process.stderr.write(`wrote ${join(a.out, `${base}.json`)} and .md (task folders in ${tasksDir})\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
