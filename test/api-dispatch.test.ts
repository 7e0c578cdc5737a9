import { describe, expect, it } from 'vitest';
import { createDispatcher, type Handlers } from '../main/core/dispatch.js';
import { METHOD_NAMES } from '../main/contract/api.js';

// Handlers that record what reached them: a refused call must never get here.
function recordingHandlers(): { handlers: Handlers; calls: string[] } {
  const calls: string[] = [];
  const handlers = Object.fromEntries(METHOD_NAMES.map((m) => [m, (p: unknown) => (calls.push(m), { echoed: p })])) as unknown as Handlers;
  return { handlers, calls };
}

describe('API dispatcher', () => {
  it('refuses an unknown method without calling anything', async () => {
    const { handlers, calls } = recordingHandlers();
    const d = createDispatcher(handlers);
    for (const m of ['fs.readFile', 'constructor', '__proto__', 42, null]) {
      const r = await d(m, {});
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.error.code).toBe('unknown_method');
    }
    expect(calls).toEqual([]);
  });

  it('refuses bad arguments with the field that is wrong', async () => {
    const { handlers, calls } = recordingHandlers();
    const d = createDispatcher(handlers);
    const bad: Array<[string, unknown, string]> = [
      ['tasks.get', { taskId: '../../etc' }, 'taskId'],
      ['tasks.readFile', { taskId: 'axpy', file: '/etc/passwd' }, 'file'],
      ['runs.start', { task: 'axpy', strategy: 'random', budget: -1, gpu: null }, 'budget'],
      ['runs.start', { task: 'axpy', strategy: 'random', budget: 5, gpu: null, extra: 1 }, '(argument)'],
      ['sessions.get', { id: '../x' }, 'id'],
      ['export.report', { sessionId: 's1', format: 'exe' }, 'format'],
      ['eval.build', { taskId: 'axpy', source: 1 }, 'source'],
      ['eval.run', { taskId: 'axpy', source: '', precise: 'yes' }, 'precise'],
    ];
    for (const [m, p, field] of bad) {
      const r = await d(m, p);
      expect(r.ok, `${m} ${JSON.stringify(p)}`).toBe(false);
      if (!r.ok) {
        expect(r.error.code).toBe('bad_args');
        expect(r.error.issues?.map((i) => i.path).join(' ')).toContain(field);
      }
    }
    expect(calls).toEqual([]);
  });

  it('passes a valid argument through and wraps handler errors in an envelope', async () => {
    const { handlers } = recordingHandlers();
    handlers['sessions.get'] = () => {
      throw new Error('no session at /x');
    };
    const d = createDispatcher(handlers);
    const ok = await d('tasks.validateManifest', { text: 'name: x' });
    expect(ok).toEqual({ ok: true, result: { echoed: { text: 'name: x' } } });
    const failed = await d('sessions.get', { id: 's1' });
    expect(failed).toEqual({ ok: false, error: { code: 'failed', message: 'no session at /x' } });
  });
});
