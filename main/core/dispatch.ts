// The one gate every call passes through, whichever transport carried it: unknown methods are
// refused, every argument is validated against the contract's schema, and handler failures come
// back as error envelopes (never as thrown exceptions across the boundary).
import type { z } from 'zod';
import { isMethodName, ParamSchemas, type ApiError, type Envelope, type MethodName, type Results } from '../contract/api.js';
import { CoreError } from './errors.js';

/** A method's argument as its handler gets it: validated by its schema (defaults applied). */
export type Args<M extends MethodName> = z.output<(typeof ParamSchemas)[M]>;

/** What the core implements: one function per method, taking the validated argument. */
export type Handlers = {
  [M in MethodName]: (params: Args<M>) => Promise<Results[M]> | Results[M];
};

export type Dispatch = (method: unknown, params: unknown) => Promise<Envelope>;

function pathOf(p: readonly PropertyKey[]): string {
  return p.map((x) => (typeof x === 'number' ? `[${x}]` : String(x))).join('.').replace(/\.\[/g, '[') || '(argument)';
}

/** Validates a call without running it: the method name and the argument. */
export function validateCall(method: unknown, params: unknown): { ok: true; method: MethodName; params: unknown } | { ok: false; error: ApiError } {
  if (!isMethodName(method)) {
    const shown = typeof method === 'string' ? JSON.stringify(method.slice(0, 80)) : typeof method;
    return { ok: false, error: { code: 'unknown_method', message: `unknown method ${shown}` } };
  }
  const parsed = ParamSchemas[method].safeParse(params === null ? undefined : params);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => ({ path: pathOf(i.path), message: i.message }));
    return { ok: false, error: { code: 'bad_args', message: `bad argument for ${method}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`, issues } };
  }
  return { ok: true, method, params: parsed.data };
}

export function createDispatcher(handlers: Handlers, opts: { onError?: (method: string, e: unknown) => void } = {}): Dispatch {
  return async (method, params) => {
    const v = validateCall(method, params);
    if (!v.ok) return { ok: false, error: v.error };
    const handler = handlers[v.method] as (p: unknown) => unknown;
    try {
      const result = await handler(v.params);
      return { ok: true, result };
    } catch (e) {
      opts.onError?.(v.method, e);
      if (e instanceof CoreError) return { ok: false, error: { code: e.code, message: e.message } };
      return { ok: false, error: { code: 'failed', message: e instanceof Error ? e.message : String(e) } };
    }
  };
}
