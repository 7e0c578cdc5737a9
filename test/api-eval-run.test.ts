// The workbench's Evaluate through the API (eval.run): the precise timing is asked for with
// `precise: true` and reaches the evaluator; on this machine (no GPU) the variant is built and said
// compile-only, with the precise timing or without.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiService } from '../main/core/service.js';
import { NO_NVCC } from './fixtures/toolchain.js';

let home: string;
let service: ApiService;
beforeAll(() => {
  home = fs.mkdtempSync(path.join(os.tmpdir(), 'kd-api-eval-'));
  service = new ApiService({ mode: 'browser', env: { ...process.env, KERNELDUEL_HOME: home, CUDA_VISIBLE_DEVICES: '' } });
});
afterAll(async () => {
  await service.stopAll();
  fs.rmSync(home, { recursive: true, force: true });
});

describe.skipIf(NO_NVCC)('eval.run', () => {
  it('builds the baseline compile-only here, with the precise timing asked for or not', async () => {
    const h = service.handlers();
    const id = (await h['tasks.list']({})).find((x) => x.name === 'axpy')!.id;
    const t = await h['tasks.get']({ taskId: id });
    for (const precise of [true, false]) {
      const r = await h['eval.run']({ taskId: id, source: t.kernel, gpu: null, precise });
      expect(r.build.ok, r.build.failure?.reason).toBe(true);
      expect(r.result.compileOnly).toBe(true);
      expect(r.result.timing ?? []).toEqual([]);
    }
  }, 120_000);
});
