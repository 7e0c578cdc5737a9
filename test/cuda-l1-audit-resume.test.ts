// The CUDA-L1 audit's file across runs (bench/cuda-l1-audit.ts), on the CPU with two tiny
// candidates: a run resumes from the rows already written; `--redo --tasks` measures only the named
// rows again and keeps every other row (before 2026-12-02 it dropped the whole file, leaving the
// named rows alone); a selected row the deadline does not reach keeps its earlier figures, said so.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TORCH_PYTHON, TORCH_SKIP_REASON } from './pytorch-env.js';

const run = promisify(execFile);
const REF = `import torch
import torch.nn as nn
class Model(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, x):
        return torch.relu(x)
batch_size = 16
dim = 64
def get_inputs():
    return [torch.randn(batch_size, dim)]
def get_init_inputs():
    return []
`;
const CAND = REF.replace('class Model(', 'class ModelNew(').replace('torch.relu(x)', 'torch.clamp_min(x, 0)');

interface AuditRow { id: string; candidateMs: number | null; seconds: number }
interface AuditFile { rows: AuditRow[]; notRunThisTime: string[]; summary?: { controlNote?: string } }

describe.skipIf(!TORCH_PYTHON)(`the CUDA-L1 audit's rows across runs (${TORCH_SKIP_REASON})`, () => {
  let dir = '';
  const audit = async (...args: string[]): Promise<AuditFile> => {
    await run(process.execPath, ['--import', 'tsx', join(process.cwd(), 'bench/cuda-l1-audit.ts'), '--data', join(dir, 'data.json'), '--out', join(dir, 'out'), '--work', join(dir, 'work'), '--device', 'cpu', ...args], {
      env: { ...process.env, KERNELDUEL_PYTHON: TORCH_PYTHON as string }, timeout: 240_000,
    });
    return JSON.parse(readFileSync(join(dir, 'out', 'h200-cuda-l1-audit.json'), 'utf8')) as AuditFile;
  };
  const byId = (f: AuditFile): Map<string, AuditRow> => new Map(f.rows.map((r) => [r.id, r]));

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'kd-audit-resume-'));
    const item = (id: number, score: number) => ({ task_id: id, ref_code: REF, custom_code: CAND, score });
    writeFileSync(join(dir, 'data.json'), JSON.stringify({ 1: [item(1, 1.1), item(2, 1.2)], 2: [] }));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('--redo --tasks measures the named row again and keeps the others; a row the deadline cuts keeps its figures', async () => {
    const first_ = await audit('--deadline-s', '200');
    const first = byId(first_);
    // On the CPU the control (a CUDA load_inline kernel) is not run, and the file says why.
    expect([...first.keys()].sort()).toEqual(['1/1', '1/2']);
    expect(JSON.stringify(first_)).toMatch(/control checks the CUDA toolchain/);
    expect(first.get('1/1')?.candidateMs).toBeGreaterThan(0);

    const again = await audit('--deadline-s', '200', '--redo', '--tasks', '1/2');
    const second = byId(again);
    expect([...second.keys()].sort()).toEqual(['1/1', '1/2']);
    expect(second.get('1/1')).toEqual(first.get('1/1')); // untouched
    expect(second.get('1/2')?.candidateMs).toBeGreaterThan(0);
    expect(second.get('1/2')).not.toEqual(first.get('1/2')); // measured again (its own times and seconds)

    // a deadline already past: nothing is measured, nothing is lost
    const cut = await audit('--deadline-s', '0', '--redo', '--tasks', '1/1');
    expect(byId(cut).get('1/1')).toEqual(first.get('1/1'));
    expect(cut.rows).toHaveLength(2);
    expect(cut.notRunThisTime).toContain('1/1 (deadline; its earlier row kept)');
  }, 600_000);
});
