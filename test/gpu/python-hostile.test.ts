// The Python runner's checks against cheating candidates, on a real GPU (docs/PYTHON-CANDIDATES.md):
// the same candidates as the CPU tests (test/fixtures/python-hostile.ts) plus one that returns its
// output on the CPU, run through resources/python/kd_candidate.py with CUDA, one at a time. An
// honest candidate must pass every new check (the GPU's own time, calls on first-seen inputs) on
// the GPU, where those checks could misfire: its figures are printed for the results file.
// Run: `npm run test:gpu` (or `./test-gpu python-hostile` in the GPU bundle). Needs an NVIDIA GPU
// and Python with CUDA-enabled torch (KERNELDUEL_PYTHON, else python3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { measureCandidate, type CandidateOutcome } from '../../main/engine/pytorch/candidate.js';
import { PY_CANDIDATES, PY_PROBLEM } from '../fixtures/python-task.js';
import { PY_HOSTILE } from '../fixtures/python-hostile.js';

const python = process.env.KERNELDUEL_PYTHON ?? 'python3';
const dir = mkdtempSync(join(tmpdir(), 'kd-gpu-pyhostile-'));
const problem = join(dir, 'problem.py');
writeFileSync(problem, PY_PROBLEM);
// A forward long enough (16384 x 1024 by 1024) that a cache hit is far cheaper than computing.
const BIG = { batch: 16384, n: 1024 };

async function run(name: string, source: string, overrides: Record<string, number> = BIG): Promise<CandidateOutcome> {
  const file = join(dir, `${name}.py`);
  writeFileSync(file, source);
  const r = await measureCandidate(problem, file, {
    python, workDir: join(dir, `run-${name}`), extDir: join(dir, `ext-${name}`), timeoutMs: 240_000, sandbox: true, device: 'cuda', eager: true, checks: 3, overrides,
  });
  const t = r.time;
  const wrong = r.correct === false ? r.file?.checks?.find((c) => !c.ok)?.why ?? 'incorrect' : undefined;
  console.log(`# ${name}: ${r.failure ? `${r.failure.kind}: ${r.failure.message.split('\n')[0].slice(0, 200)}` : wrong ? `incorrect: ${wrong}` : 'ok'}${t ? `; median ${t.medianMs.toFixed(4)} ms, GPU ${t.gated?.deviceMedianMs.toFixed(4) ?? '—'} ms, host call ${t.hostCallMedianMs?.toFixed(4) ?? '—'} ms, first-use min ${t.firstUse?.minMs?.toFixed(4) ?? '—'} ms` : ''}`);
  return r;
}

test('an honest candidate passes on the GPU: timed, with its GPU time and calls on first-seen inputs near its timed calls', async () => {
  for (const overrides of [BIG, { batch: 16, n: 32 }]) {
    const r = await run(`good-${overrides.batch}`, PY_CANDIDATES.good, overrides);
    assert.equal(r.failure, undefined, `${r.failure?.kind}: ${r.failure?.message}`);
    assert.equal(r.correct, true);
    const t = r.time!;
    assert.ok(t.gated && t.gated.deviceMedianMs > 0, 'no GPU time');
    // the per-call figure an optimisation run ranks by: per gated sample, at least the GPU's time and
    // that call's host time; the gated floor is the empty call's host ms beyond the gate (a few µs)
    const per = t.gated.perCallSamplesMs ?? [];
    assert.equal(per.length, t.gated.samples);
    per.forEach((x, i) => assert.ok(x >= (t.gated!.samplesMs ?? [])[i], `per-call ${x} under the GPU's ${(t.gated!.samplesMs ?? [])[i]}`));
    assert.ok((t.gated.floorMs ?? -1) >= 0 && (t.gated.floorMs ?? 1) < 0.5, `gated floor ${t.gated.floorMs} ms`);
    // the GPU's own time stays under the one-call figure (it leaves out Python's launch): 2026-12-02's
    // audit had one eager row where the host clock less the plain floor read 2.4x the one-call figure
    assert.ok(t.gated.deviceMedianMs <= 1.1 * t.medianMs + 0.005, `GPU ${t.gated.deviceMedianMs} ms over one-call ${t.medianMs} ms`);
    console.log(`# good-${overrides.batch}: per-call median ${[...per].sort((a, b) => a - b)[per.length >> 1]?.toFixed(4)} ms, gated floor ${t.gated.floorMs?.toFixed(4)} ms`);
    assert.equal(t.firstUse?.samples, 5);
    assert.ok((t.firstUse?.minMs ?? 0) < 2 * t.medianMs + 0.02, `first-use ${t.firstUse?.minMs} ms against ${t.medianMs} ms`);
  }
});

test('honest candidates that use torch.compile or a CUDA graph pass too (nothing they do at import or first call looks like a replaced function)', async () => {
  const compiled = PY_CANDIDATES.good
    .replace('        self.lin = nn.Linear(n, n)', '        self.lin = nn.Linear(n, n)\n        self.f = torch.compile(lambda x: torch.clamp_min(self.lin(x), 0))')
    .replace('return torch.clamp_min(self.lin(x), 0)', 'return self.f(x)');
  const graphed = PY_CANDIDATES.good
    .replace('        self.lin = nn.Linear(n, n)', '        self.lin = nn.Linear(n, n)\n        self.g = None')
    .replace('        return torch.clamp_min(self.lin(x), 0)', [
      '        if self.g is None or self.x.shape != x.shape:',
      '            self.x = x.clone()',
      '            s = torch.cuda.Stream()',
      '            s.wait_stream(torch.cuda.current_stream())',
      '            with torch.cuda.stream(s):',
      '                torch.clamp_min(self.lin(self.x), 0)',
      '            torch.cuda.current_stream().wait_stream(s)',
      '            self.g = torch.cuda.CUDAGraph()',
      '            with torch.cuda.graph(self.g):',
      '                self.y = torch.clamp_min(self.lin(self.x), 0)',
      '        self.x.copy_(x)',
      '        self.g.replay()',
      '        return self.y.clone()',
    ].join('\n'));
  for (const [name, source] of [['compiled', compiled], ['graphed', graphed]] as const) {
    const r = await run(name, source, { batch: 256, n: 256 });
    assert.equal(r.failure, undefined, `${name}: ${r.failure?.kind}: ${r.failure?.message}`);
    assert.equal(r.correct, true, name);
  }
});

test('a cache of results keyed on the inputs is caught by the calls on first-seen inputs; one that stops at the first new input keeps no cached figure', async () => {
  const r = await run('contentCache', PY_HOSTILE.contentCache);
  assert.equal(r.failure?.kind, 'correctness', `${r.failure?.kind}: ${r.failure?.message}`);
  assert.match(r.failure!.message, /calls on repeated inputs took [\d.]+ ms, calls on first-seen inputs at least/);
  const u = await run('cacheUntilNew', PY_HOSTILE.cacheUntilNew);
  if (u.failure) assert.match(u.failure.message, /calls on first-seen inputs at least/);
  else assert.ok(u.time!.medianMs >= 0.5 * (u.time!.firstUse?.minMs ?? Infinity), `cacheUntilNew kept ${u.time!.medianMs} ms against first-use ${u.time!.firstUse?.minMs} ms`);
});

test('lazy and subclass outputs, a replaced checker or clock, a wrong dtype and an output on the CPU all fail', async () => {
  const expect: Array<[keyof typeof PY_HOSTILE | 'cpuOutput', RegExp]> = [
    ['deferred', /Deferred \(a subclass of torch\.Tensor\), not a plain tensor/],
    ['hollow', /Hollow \(a subclass of torch\.Tensor\)/],
    ['patchesChecker', /^the candidate replaced torch\.isclose \(at its import\)/],
    ['patchesClock', /^the candidate replaced time\.perf_counter \(while it was timed\)/],
    ['wrongDtype', /dtype float64, the reference's is float32/],
    ['cpuOutput', /on cpu, the reference's output is on cuda/],
  ];
  const cpuOutput = PY_CANDIDATES.good.replace('return torch.clamp_min(self.lin(x), 0)', 'return torch.clamp_min(self.lin(x), 0).cpu()');
  for (const [name, why] of expect) {
    const r = await run(name, name === 'cpuOutput' ? cpuOutput : PY_HOSTILE[name], { batch: 64, n: 32 });
    const said = r.failure?.message ?? r.file?.checks?.find((c) => !c.ok)?.why ?? '';
    assert.notEqual(r.correct === true && !r.failure, true, `${name} passed`);
    assert.match(said, why, `${name}: ${said}`);
  }
});
