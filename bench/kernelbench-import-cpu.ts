// Imports every KernelBench problem of the given levels and computes each imported task's reference
// outputs for one seed on the CPU, with a per-problem time limit; writes
// bench/results/kernelbench-import-cpu.json and .md: how many import, how many reference
// computations succeed, and why each failure failed (too slow on the CPU, too big for this
// machine's memory, needs CUDA, needs a newer torch, the problem's own error).
//
//   KERNELDUEL_PYTHON=/usr/bin/python3 npx tsx bench/kernelbench-import-cpu.ts
//   ... --kernelbench ../shared/kernelbench --levels 1,2 --limit-s 30 --max-gib 4 --out bench/results
//   ... --resume    (keeps the problems already done in <out>/kernelbench-import-cpu.partial.jsonl)
//
// CPU only: no GPU is involved. The label in the files says which torch and which machine.
import { appendFileSync, existsSync, mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { findPython } from '../main/engine/platform/toolchain/python.js';
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
}

function parseArgs(argv: string[]): Args {
  const a: Args = { kernelbench: process.env.KERNELBENCH_DIR ?? '../shared/kernelbench', levels: [1, 2], limitS: 30, maxGiB: 4, seed: 1, out: 'bench/results', tasks: null, resume: false };
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
      default: throw new Error(`unknown argument ${argv[i]}`);
    }
  }
  return a;
}

type RefOutcome = 'ok' | 'too-slow-on-cpu' | 'too-big-for-memory' | 'needs-cuda' | 'needs-newer-torch' | 'random-forward' | 'error' | 'not-imported';

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
  if (bytes > a.maxGiB * GiB) return { outcome: 'too-big-for-memory', why: `${(bytes / GiB).toFixed(1)} GiB of tensors, over the ${a.maxGiB} GiB allowed on this machine (${(totalmem() / GiB).toFixed(0)} GiB, shared)` };
  let server: ReferenceServer | undefined;
  try {
    server = await ReferenceServer.start({ python, problem: r.file, device: 'cpu', startTimeoutMs: 120_000, dataBytes: (a.maxGiB * 2 + 2) * GiB });
    const ans = await server.run({ seed: a.seed }, a.limitS * 1000);
    const outcome: RefOutcome = r.randomForward ? 'random-forward' : 'ok';
    return { outcome, ...(outcome === 'random-forward' ? { why: 'computed, but the forward is random (dropout in training mode): no kernel can match it' } : {}), seconds: { inputs: ans.seconds.inputs, forward: ans.seconds.forward }, outputs: ans.output_stats };
  } catch (e) {
    if (!(e instanceof ReferenceFailure)) throw e;
    if (e.kind === 'timeout') return { outcome: 'too-slow-on-cpu', why: `did not finish within ${a.limitS} s (inputs and forward, one torch thread)` };
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
  const tasksDir = a.tasks ? resolve(a.tasks) : mkdtempSync(join(tmpdir(), 'kd-kernelbench-'));
  mkdirSync(tasksDir, { recursive: true });
  mkdirSync(a.out, { recursive: true });
  const partial = join(a.out, 'kernelbench-import-cpu.partial.jsonl');
  const rows: Row[] = a.resume && existsSync(partial) ? readFileSync(partial, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l) as Row) : [];
  if (!a.resume) rmSync(partial, { force: true });
  const done = new Set(rows.map((r) => r.problem));
  for (const level of a.levels) {
    for (const file of listProblems(join(a.kernelbench, `level${level}`))) {
      if (done.has(`level${level}/${file.split('/').pop()}`)) continue;
      const r = await importProblem(file, { python: py.python, outDir: tasksDir, force: true, command: 'bench/kernelbench-import-cpu.ts' });
      const ref = await computeReference(r, a, py.python);
      const row: Row = {
        problem: `level${level}/${file.split('/').pop()}`,
        task: r.name,
        imported: !r.failure,
        ...(r.failure ? { importFailure: r.failure } : { shapesFrom: r.shapesFrom, shapesNote: r.shapesNote, gib: Number(((r.bytes ?? 0) / GiB).toFixed(3)) }),
        warnings: r.warnings,
        reference: ref,
      };
      rows.push(row);
      appendFileSync(partial, JSON.stringify(row) + '\n');
      process.stderr.write(`${row.problem}: ${row.imported ? `imported (${row.shapesFrom})` : `NOT imported (${r.failure?.kind})`}; reference ${ref.outcome}${ref.seconds ? ` (${(ref.seconds.inputs + ref.seconds.forward).toFixed(1)} s)` : ''}\n`);
    }
  }
  const count = <T extends string>(xs: T[]): Record<string, number> => xs.reduce<Record<string, number>>((m, x) => ((m[x] = (m[x] ?? 0) + 1), m), {});
  const summary = {
    problems: rows.length,
    imported: rows.filter((r) => r.imported).length,
    importFailures: count(rows.filter((r) => !r.imported).map((r) => r.importFailure?.kind ?? 'unknown')),
    shapesFrom: count(rows.filter((r) => r.imported).map((r) => r.shapesFrom ?? 'unknown')),
    referenceOk: rows.filter((r) => r.reference.outcome === 'ok').length,
    referenceComputedButRandom: rows.filter((r) => r.reference.outcome === 'random-forward').length,
    referenceOutcomes: count(rows.map((r) => r.reference.outcome)),
    // Outputs whose every element is the same for seed 1 on the CPU (a check against them proves little).
    constantOutputs: rows.filter((r) => r.warnings.some((w) => /is constant/.test(w)) || (r.reference.outputs ?? []).some((o) => o.std === 0 && (o.elements ?? 0) > 1)).map((r) => r.problem),
    nonFiniteOutputs: rows.filter((r) => (r.reference.outputs ?? []).some((o) => (o.nonfinite ?? 0) > 0)).map((r) => r.problem),
    randomForwards: rows.filter((r) => r.warnings.some((w) => /forward is random/.test(w))).map((r) => r.problem),
  };
  const command = `KERNELDUEL_PYTHON=${py.python} npx tsx bench/kernelbench-import-cpu.ts --kernelbench ${a.kernelbench} --levels ${a.levels.join(',')} --limit-s ${a.limitS} --max-gib ${a.maxGiB} --seed ${a.seed}`;
  const label = `CPU, torch ${py.torch} (${py.python === '/usr/bin/python3' ? 'Debian python3-torch' : py.python}), no GPU`;
  const host = { cpu: cpus()[0]?.model ?? 'unknown', cores: cpus().length, memGiB: Number((totalmem() / GiB).toFixed(1)), torchThreads: 'torch default (1 here)' };
  const result = { label, command, date: new Date().toISOString(), seconds: (Date.now() - started) / 1000, python: { path: py.python, version: py.version, torch: py.torch, cuda: py.cuda }, host, settings: { seed: a.seed, limitSeconds: a.limitS, maxTensorGiB: a.maxGiB, importRunLimitSeconds: 5, importRunMaxGiB: 1 }, summary, problems: rows };
  writeFileSync(join(a.out, 'kernelbench-import-cpu.json'), JSON.stringify(result, null, 2) + '\n');
  const md = [
    '# KernelBench import and CPU reference computation',
    '',
    `**${label}.** ${host.cpu}, ${host.cores} cores, ${host.memGiB} GiB. Generated ${result.date} in ${(result.seconds / 60).toFixed(0)} min by`,
    '',
    '```',
    command,
    '```',
    '',
    `- Problems: ${summary.problems} (levels ${a.levels.join(', ')} of KernelBench, as in ${a.kernelbench}).`,
    `- Imported: **${summary.imported}** (shapes from a CPU forward: ${summary.shapesFrom.cpu ?? 0}, torch's meta device: ${summary.shapesFrom.meta ?? 0}, extrapolated from smaller batches: ${summary.shapesFrom.scaled ?? 0}). Not imported: ${Object.entries(summary.importFailures).map(([k, v]) => `${v} ${k}`).join(', ') || 'none'}.`,
    `- Reference outputs computed on the CPU for seed ${a.seed} at the problem's own sizes within ${a.limitS} s: **${summary.referenceOk + summary.referenceComputedButRandom}** (${summary.referenceComputedButRandom} of them random forwards: dropout). Outcomes: ${Object.entries(summary.referenceOutcomes).map(([k, v]) => `${k} ${v}`).join(', ')}.`,
    `- Outputs constant on the CPU (every element equal, so a check proves little): ${summary.constantOutputs.join(', ') || 'none among those computed'}. Outputs with non-finite values: ${summary.nonFiniteOutputs.join(', ') || 'none among those computed'}.`,
    `- Random forwards (dropout in training mode; no kernel can match them): ${summary.randomForwards.join(', ') || 'none'}.`,
    '',
    '| problem | imported (shapes) | GiB | reference on CPU | why / seconds |',
    '| --- | --- | --- | --- | --- |',
    ...rows.map((r) => `| ${r.problem} | ${r.imported ? r.shapesFrom : `no: ${r.importFailure?.kind}`} | ${r.gib ?? ''} | ${r.reference.outcome} | ${(r.reference.why ?? (r.reference.seconds ? `${(r.reference.seconds.inputs + r.reference.seconds.forward).toFixed(1)} s` : '')).replace(/\|/g, '\\|')} |`),
    '',
  ];
  writeFileSync(join(a.out, 'kernelbench-import-cpu.md'), md.join('\n'));
  rmSync(partial, { force: true });
  process.stderr.write(`wrote ${join(a.out, 'kernelbench-import-cpu.json')} and .md (task folders in ${tasksDir})\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${(e as Error)?.stack ?? String(e)}\n`);
  process.exit(1);
});
