// Parsing model answers and screening untrusted code (no model, no GPU).
import { describe, expect, it } from 'vitest';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadTask } from '../main/engine/task/manifest.js';
import { builtinTasksDir } from '../main/engine/base/paths.js';
import { parseAnswer } from '../main/engine/llm/parse.js';
import { checkEntryPoint } from '../main/engine/source/entry.js';
import { screenSource } from '../main/engine/source/screen.js';
import { paramType, stripCode } from '../main/engine/source/csource.js';
import { CHEATS, GOOD_ANSWER, GOOD_CODE, MALFORMED_ANSWER, NO_ENTRY_ANSWER, UNCLOSED_ANSWER, WRONG_SIGNATURE_ANSWER, answer } from './fixtures/llm/answers.js';

const BUILTIN = builtinTasksDir();
const names = readdirSync(BUILTIN, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort();
const softmax = loadTask(join(BUILTIN, 'softmax'));

describe('parseAnswer', () => {
  it('extracts analysis, design and code', () => {
    const r = parseAnswer(GOOD_ANSWER, 'softmax');
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.parts.analysis).toMatch(/^The baseline gives one thread/);
    expect(r.parts.design).toMatch(/^One warp per row/);
    expect(r.parts.code.trim()).toBe(GOOD_CODE.trim());
    expect(r.parts.missing).toEqual([]);
  });
  it('accepts other heading styles and picks the block with the entry point', () => {
    const text = `**1. Performance Analysis**\nmemory bound\n\n**2. Algorithm Design**\nuse warps\n\nA helper first:\n\`\`\`cpp\n__device__ int h() { return 1; }\n\`\`\`\n### 3. Code\n\`\`\`cuda\n${GOOD_CODE}\`\`\`\n`;
    const r = parseAnswer(text, 'softmax');
    expect(r.ok && r.parts.analysis).toBe('memory bound');
    expect(r.ok && r.parts.design).toMatch(/^use warps/);
    expect(r.ok && r.parts.code).toContain('void softmax(');
  });
  it('fails without a code block, or with an unclosed one', () => {
    expect(parseAnswer(MALFORMED_ANSWER, 'softmax')).toMatchObject({ ok: false, reason: expect.stringMatching(/no ```cuda code block/) });
    expect(parseAnswer(UNCLOSED_ANSWER, 'softmax')).toMatchObject({ ok: false, reason: expect.stringMatching(/not closed/) });
  });
  it('keeps unlabelled prose as the analysis and says what is missing', () => {
    const r = parseAnswer(`Just use warps.\n\`\`\`cuda\n${GOOD_CODE}\`\`\``, 'softmax');
    expect(r.ok && r.parts.missing).toEqual(['analysis', 'design']);
    expect(r.ok && r.parts.analysis).toBe('Just use warps.');
  });
});

describe('checkEntryPoint', () => {
  it('accepts the baseline and a rewrite with __restrict__ and const scalars', () => {
    expect(checkEntryPoint(softmax.baselineSource, softmax).ok).toBe(true);
    expect(checkEntryPoint(GOOD_CODE, softmax).ok).toBe(true);
  });
  it('rejects a missing entry point and a wrong signature, naming the problem', () => {
    const missing = parseAnswer(NO_ENTRY_ANSWER, 'softmax');
    expect(missing.ok).toBe(true);
    if (missing.ok) expect(checkEntryPoint(missing.parts.code, softmax).reason).toMatch(/does not define the entry point softmax/);
    const wrong = parseAnswer(WRONG_SIGNATURE_ANSWER, 'softmax');
    if (wrong.ok) expect(checkEntryPoint(wrong.parts.code, softmax).reason).toMatch(/takes 3 parameters; the task needs 4/);
    const constOut = GOOD_CODE.replace('float* y, const int rows', 'const float* y, const int rows');
    expect(checkEntryPoint(constOut, softmax).reason).toMatch(/parameter 2 \(y\)/);
    const nonConstIn = GOOD_CODE.replace('void softmax(const float* __restrict__ x', 'void softmax(float* __restrict__ x');
    expect(checkEntryPoint(nonConstIn, softmax).reason).toMatch(/parameter 1 \(x\).*expected const float\*/);
    expect(checkEntryPoint(GOOD_CODE.replace('void softmax(const float* __restrict__ x', 'int softmax(const float* __restrict__ x'), softmax).reason).toMatch(/must return void/);
    expect(checkEntryPoint(GOOD_CODE.replace('void softmax(const float* __restrict__ x', '__global__ void softmax(const float* __restrict__ x'), softmax).reason).toMatch(/host function/);
  });
  it('normalises parameter types', () => {
    expect(paramType('float const * __restrict__ p')).toMatchObject({ base: 'float', pointer: 1, constPointee: true });
    expect(paramType('unsigned n')).toMatchObject({ base: 'unsigned int', pointer: 0 });
    expect(paramType('int64_t n')).toMatchObject({ base: 'long long', pointer: 0 });
    expect(paramType('const uint8_t* buf')).toMatchObject({ base: 'unsigned char', pointer: 1, constPointee: true });
  });
});

describe('screenSource', () => {
  it('passes every built-in task kernel and reference', () => {
    for (const n of names) {
      const t = loadTask(join(BUILTIN, n));
      for (const [which, src] of [['kernel.cu', t.baselineSource], ['reference.cu', t.referenceSource]] as const) {
        const r = screenSource(src, t);
        expect(r.violations, `${n}/${which}: ${r.reason}`).toEqual([]);
      }
    }
  });
  it('passes a legitimate rewrite with device inline asm and cheat words in comments and strings', () => {
    const code = GOOD_CODE + '\nstatic const char* const kNote = "fopen( system( cudaStreamCreate(";\n/* std::thread t; */\n';
    expect(screenSource(code, softmax)).toEqual({ ok: true, violations: [] });
  });
  for (const c of CHEATS) {
    it(`rejects: ${c.name} (${c.rule})`, () => {
      const r = screenSource(c.code, softmax);
      expect(r.ok).toBe(false);
      expect(r.violations.map((v) => v.rule)).toContain(c.rule);
      expect(r.reason).toMatch(/^line \d+: .*not allowed|^line \d+: the entry point/);
    });
  }
  it('allows fast intrinsics and half types only when the task allows fast math', () => {
    const fast = { ...softmax, manifest: { ...softmax.manifest, fast_math: true } };
    const code = GOOD_CODE.replace('s += expf(xr[c] - m);', 's += __expf(xr[c] - m);');
    expect(screenSource(code, softmax).ok).toBe(false);
    expect(screenSource(code, fast).ok).toBe(true);
  });
  it('strips comments and strings but keeps offsets and include names', () => {
    const src = '#include "x.h"\nint a; // cudaDeviceReset()\nconst char* s = "popen(";\n';
    const s = stripCode(src);
    expect(s.length).toBe(src.length);
    expect(s).toContain('#include "x.h"');
    expect(s).not.toContain('cudaDeviceReset');
    expect(s).not.toContain('popen');
  });
  it('an answer with a cheat and an otherwise good shape parses but is screened out', () => {
    const r = parseAnswer(answer(CHEATS[0].code), 'softmax');
    expect(r.ok).toBe(true);
    if (r.ok) expect(screenSource(r.parts.code, softmax).reason).toMatch(/cudaStreamCreateWithFlags is not allowed/);
  });
});
