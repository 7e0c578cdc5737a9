import { describe, expect, it } from 'vitest';
import { evalExpr, evalPositiveInt, exprSymbols, ExprError, parseExpr } from '../main/engine/base/expr.js';

const err = (src: string, scope: Record<string, number> = {}): ExprError => {
  try {
    evalExpr(src, scope);
  } catch (e) {
    expect(e).toBeInstanceOf(ExprError);
    return e as ExprError;
  }
  throw new Error(`"${src}" evaluated without error`);
};

describe('evalExpr arithmetic', () => {
  it('evaluates the four operations and modulo over the scope', () => {
    expect(evalExpr('rows * cols + 1', { rows: 3, cols: 4 })).toBe(13);
    expect(evalExpr('7 / 2', {})).toBe(3.5);
    expect(evalExpr('10 % 3', {})).toBe(1);
    expect(evalExpr('n - 1', { n: 8 })).toBe(7);
    expect(evalExpr(42, {})).toBe(42);
  });
  it('respects precedence and parentheses', () => {
    expect(evalExpr('1 + 2 * 3', {})).toBe(7);
    expect(evalExpr('(1 + 2) * 3', {})).toBe(9);
    expect(evalExpr('2 * rows * cols * 4', { rows: 2, cols: 3 })).toBe(48);
    expect(evalExpr('-n + 10', { n: 3 })).toBe(7);
  });
  it('supports ** as exponentiation, binding tighter than * and associating to the right', () => {
    expect(evalExpr('2 ** 10', {})).toBe(1024);
    expect(evalExpr('2 * 3 ** 2', {})).toBe(18);
    expect(evalExpr('2 ** 3 ** 2', {})).toBe(512);
    expect(evalExpr('2 ** k', { k: 31 })).toBe(2 ** 31);
  });
  it('evaluates comparisons and logic to 1/0 and the ternary', () => {
    expect(evalExpr('TPR <= BLOCK', { TPR: 32, BLOCK: 128 })).toBe(1);
    expect(evalExpr('TPR <= BLOCK', { TPR: 256, BLOCK: 128 })).toBe(0);
    expect(evalExpr('a == 2 && b != 3', { a: 2, b: 4 })).toBe(1);
    expect(evalExpr('a == 2 && b != 3', { a: 2, b: 3 })).toBe(0);
    expect(evalExpr('a > 5 || b >= 3', { a: 1, b: 3 })).toBe(1);
    expect(evalExpr('!a', { a: 0 })).toBe(1);
    expect(evalExpr('a < 1 ? 10 : 20', { a: 5 })).toBe(20);
    expect(evalExpr('true + 1', {})).toBe(2);
  });
  it('calls the whitelisted functions', () => {
    expect(evalExpr('min(3, 4)', {})).toBe(3);
    expect(evalExpr('max(3, 4, 9)', {})).toBe(9);
    expect(evalExpr('ceil_div(n, 32)', { n: 100 })).toBe(4);
    expect(evalExpr('floor(7 / 2) + ceil(7 / 2)', {})).toBe(7);
    expect(evalExpr('log2(1024) + sqrt(16) + abs(-1)', {})).toBe(15);
  });
});

describe('evalExpr errors', () => {
  it('names an unknown symbol and lists the known ones', () => {
    const e = err('rows * colz', { rows: 1, cols: 2 });
    expect(e.message).toContain('unknown name "colz"');
    expect(e.message).toMatch(/known: rows, cols/);
  });
  it('does not resolve Object.prototype names as symbols', () => {
    expect(err('constructor', {}).message).toContain('unknown name "constructor"');
    expect(err('__proto__ + 1', { a: 1 }).message).toContain('unknown name "__proto__"');
  });
  it('rejects unknown functions and lists the allowed ones', () => {
    const e = err('exp(1)');
    expect(e.message).toContain('unknown function "exp"');
    expect(e.message).toContain('ceil_div');
  });
  it('rejects member access, indexing, `this` and strings', () => {
    expect(err('Math.max', { Math: 1 }).message).toMatch(/MemberExpression is not allowed/);
    expect(err('a[0]', { a: 1 }).message).toMatch(/MemberExpression is not allowed/);
    expect(err('this').message).toMatch(/ThisExpression is not allowed/);
    expect(err('"abc"').message).toMatch(/only numbers are allowed/);
    expect(err('min.constructor(1)').message).toMatch(/unknown function|not allowed/);
  });
  it('reports a parse error with the source text', () => {
    expect(() => parseExpr('1 +')).toThrow(ExprError);
    expect(err('rows *').message).toMatch(/cannot parse "rows \*"/);
  });
  it('rejects expressions that give NaN', () => {
    expect(err('0 / 0').message).toMatch(/did not give a number/);
  });
});

describe('evalPositiveInt', () => {
  it('accepts positive integers and rejects zero, negatives and fractions', () => {
    expect(evalPositiveInt('n / 2', { n: 8 })).toBe(4);
    expect(() => evalPositiveInt('n - 8', { n: 8 })).toThrow(/positive integer, got 0/);
    expect(() => evalPositiveInt('-n', { n: 8 })).toThrow(/positive integer/);
    expect(() => evalPositiveInt('n / 3', { n: 8 })).toThrow(/positive integer/);
  });
});

describe('exprSymbols', () => {
  it('lists the names an expression refers to, once each, without function names', () => {
    expect(exprSymbols('min(a, b) * c + a').sort()).toEqual(['a', 'b', 'c']);
    expect(exprSymbols('x ? y : -z').sort()).toEqual(['x', 'y', 'z']);
    expect(exprSymbols('TPR <= BLOCK && !(VEC > 2)').sort()).toEqual(['BLOCK', 'TPR', 'VEC']);
    expect(exprSymbols('ceil_div(n, 4)')).toEqual(['n']);
  });
  it('gives nothing for numbers and constant expressions', () => {
    expect(exprSymbols(5)).toEqual([]);
    expect(exprSymbols('2 ** 10 + 1')).toEqual([]);
  });
  it('throws on a parse error', () => {
    expect(() => exprSymbols('a +* b')).toThrow(ExprError);
  });
});
