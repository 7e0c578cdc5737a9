// Safe arithmetic expressions for manifests: shapes, scalar values, restrictions and metrics.
// Parsed with jsep (a maintained expression parser) and evaluated over a whitelist of operators
// and functions: no property access, no `this`, nothing that reaches JavaScript itself.
import jsep from 'jsep';

export type Scope = Record<string, number>;

const FUNCS: Record<string, (...a: number[]) => number> = {
  min: Math.min,
  max: Math.max,
  ceil: Math.ceil,
  floor: Math.floor,
  abs: Math.abs,
  log2: Math.log2,
  sqrt: Math.sqrt,
  ceil_div: (a, b) => Math.ceil(a / b),
};

jsep.addBinaryOp('**', 11, true);

export class ExprError extends Error {}

type Node = jsep.Expression;

export function parseExpr(src: string): Node {
  try {
    return jsep(src);
  } catch (e) {
    throw new ExprError(`cannot parse "${src}": ${(e as Error).message}`);
  }
}

/** Names an expression refers to (not counting function names). */
export function exprSymbols(src: string | number): string[] {
  if (typeof src === 'number') return [];
  const out = new Set<string>();
  const walk = (n: Node): void => {
    switch (n.type) {
      case 'Identifier':
        out.add(n.name as string);
        break;
      case 'BinaryExpression':
        walk(n.left as Node);
        walk(n.right as Node);
        break;
      case 'UnaryExpression':
        walk(n.argument as Node);
        break;
      case 'ConditionalExpression':
        walk(n.test as Node);
        walk(n.consequent as Node);
        walk(n.alternate as Node);
        break;
      case 'CallExpression':
        for (const a of n.arguments as Node[]) walk(a);
        break;
      case 'Compound':
        for (const a of n.body as Node[]) walk(a);
        break;
      default:
        break;
    }
  };
  walk(parseExpr(src));
  return [...out];
}

function evalNode(n: Node, scope: Scope, src: string): number {
  switch (n.type) {
    case 'Literal': {
      const v = n.value;
      if (typeof v === 'number') return v;
      if (typeof v === 'boolean') return v ? 1 : 0;
      throw new ExprError(`"${src}": only numbers are allowed, found ${String(n.raw)}`);
    }
    case 'Identifier': {
      const name = n.name as string;
      if (name === 'true') return 1;
      if (name === 'false') return 0;
      if (!Object.prototype.hasOwnProperty.call(scope, name)) {
        const known = Object.keys(scope);
        throw new ExprError(`"${src}": unknown name "${name}"${known.length ? ` (known: ${known.join(', ')})` : ''}`);
      }
      return scope[name];
    }
    case 'UnaryExpression': {
      const a = evalNode(n.argument as Node, scope, src);
      switch (n.operator) {
        case '-': return -a;
        case '+': return a;
        case '!': return a ? 0 : 1;
        default: throw new ExprError(`"${src}": operator ${String(n.operator)} is not allowed`);
      }
    }
    case 'BinaryExpression': {
      const op = n.operator as string;
      if (op === '&&') return evalNode(n.left as Node, scope, src) ? evalNode(n.right as Node, scope, src) : 0;
      if (op === '||') {
        const l = evalNode(n.left as Node, scope, src);
        return l ? l : evalNode(n.right as Node, scope, src);
      }
      const a = evalNode(n.left as Node, scope, src);
      const b = evalNode(n.right as Node, scope, src);
      switch (op) {
        case '+': return a + b;
        case '-': return a - b;
        case '*': return a * b;
        case '/': return a / b;
        case '%': return a % b;
        case '**': return a ** b;
        case '<': return +(a < b);
        case '<=': return +(a <= b);
        case '>': return +(a > b);
        case '>=': return +(a >= b);
        case '==': case '===': return +(a === b);
        case '!=': case '!==': return +(a !== b);
        default: throw new ExprError(`"${src}": operator ${op} is not allowed`);
      }
    }
    case 'ConditionalExpression':
      return evalNode(n.test as Node, scope, src)
        ? evalNode(n.consequent as Node, scope, src)
        : evalNode(n.alternate as Node, scope, src);
    case 'CallExpression': {
      const callee = n.callee as Node;
      const fname = callee.type === 'Identifier' ? (callee.name as string) : '';
      const f = Object.prototype.hasOwnProperty.call(FUNCS, fname) ? FUNCS[fname] : undefined;
      if (!f) throw new ExprError(`"${src}": unknown function "${fname || '?'}" (allowed: ${Object.keys(FUNCS).join(', ')})`);
      return f(...(n.arguments as Node[]).map((a) => evalNode(a, scope, src)));
    }
    default:
      throw new ExprError(`"${src}": ${n.type} is not allowed in an expression`);
  }
}

const cache = new Map<string, Node>();

export function evalExpr(src: string | number, scope: Scope): number {
  if (typeof src === 'number') return src;
  let node = cache.get(src);
  if (!node) {
    node = parseExpr(src);
    if (cache.size > 10_000) cache.clear();
    cache.set(src, node);
  }
  const v = evalNode(node, scope, src);
  if (typeof v !== 'number' || Number.isNaN(v)) throw new ExprError(`"${src}" did not give a number`);
  return v;
}

/** Evaluates an expression that must give a positive integer (shape entries, sizes). */
export function evalPositiveInt(src: string | number, scope: Scope): number {
  const v = evalExpr(src, scope);
  if (!Number.isInteger(v) || v <= 0) throw new ExprError(`"${src}" must be a positive integer, got ${v}`);
  return v;
}
