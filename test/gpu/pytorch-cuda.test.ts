// A PyTorch-reference task's CUDA entry points on a real GPU (docs/PYTHON-CANDIDATES.md, "The CUDA
// entry point of the same task"): the reference data PyTorch computes on the GPU, the judge reading
// it from files. A correct model_forward for the Linear+ReLU problem passes and is timed, a wrong
// one fails naming the element, one that writes a weight fails the inputs-unchanged check.
// Run: `npm run test:gpu` (or `./test-gpu pytorch-cuda` in the GPU bundle). Needs an NVIDIA GPU,
// nvcc and Python with CUDA-enabled torch (KERNELDUEL_PYTHON, else python3).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTask } from '../../main/engine/task/manifest.js';
import { pytorchReferenceData } from '../../main/core/evaluators.js';
import { writePythonTask } from '../fixtures/python-task.js';
import { evaluatorFor } from './helpers.js';
import type { VariantSpec } from '../../main/engine/base/types.js';

const task = loadTask(writePythonTask(mkdtempSync(join(tmpdir(), 'kd-gpu-pytorch-')), 'py-linrelu-gpu'));
const ev = evaluatorFor(task, { referenceData: pytorchReferenceData(task), timing: { maxMs: 1000 } });

const kernel = (body: string): VariantSpec => ({
  source: `__global__ void linrelu(const float* x, const float* w, const float* b, float* out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= 16 * 32) return;
  int r = i / 32, c = i % 32;
  float acc = b[c];
  for (int k = 0; k < 32; k++) acc += x[r * 32 + k] * w[c * 32 + k];
  ${body}
}
void model_forward(const float* x, const float* lin_weight, const float* lin_bias, float* out) {
  linrelu<<<4, 128>>>(x, lin_weight, lin_bias, out);
}
`,
  config: {}, flags: { opt: 3 }, origin: 'user',
});

test('a correct model_forward passes every check against PyTorch\'s outputs and is timed, with the rotated samples said', async () => {
  const r = await (await ev).evaluate(kernel('out[i] = acc > 0.f ? acc : 0.f;'));
  assert.equal(r.failure, undefined, `${r.failure?.kind} ${r.failure?.reason}\n${r.failure?.log ?? ''}`);
  assert.equal(r.check?.ok, true);
  assert.ok(r.check!.checks.length >= 1);
  assert.match(r.check!.isolation!.refs, /^files: PyTorch's outputs .* rotate 8 timing samples/);
  assert.ok(r.timing && r.timing[0].medianMs > 0 && (r.timing[0].verifiedCalls ?? 0) >= 1);
  console.log(`# linrelu median ${r.timing![0].medianMs.toFixed(4)} ms, ${r.timing![0].verifiedCalls} timed calls verified; refs: ${r.check!.isolation!.refs}`);
});

test('a wrong model_forward fails naming the element, expected and got', async () => {
  const r = await (await ev).evaluate(kernel('out[i] = (acc > 0.f ? acc : 0.f) * 1.5f + 0.01f;'));
  assert.equal(r.failure?.kind, 'correctness', `${r.failure?.kind}: ${r.failure?.reason}`);
  assert.match(r.failure!.reason, /^out\[\d+\]: expected [-0-9.e]+ got [-0-9.e]+/);
});

test('a model_forward that writes a weight fails the inputs-unchanged check', async () => {
  const r = await (await ev).evaluate(kernel('out[i] = acc > 0.f ? acc : 0.f; if (i == 0) ((float*)w)[5] = 0.f;'));
  assert.equal(r.failure?.kind, 'correctness', `${r.failure?.kind}: ${r.failure?.reason}`);
  assert.match(r.failure!.reason, /lin_weight: the variant wrote to its input buffer lin_weight/);
});

test.after(async () => (await ev).close());
