// The errors the core throws on purpose, each with the code a caller should see: the dispatcher
// turns one into an error envelope with that code (main/core/dispatch.ts), the CLI prints its
// message as it is (a user's mistake or the machine's state, never a stack trace).
import type { ApiErrorCode } from '../contract/api.js';

export class CoreError extends Error {
  constructor(
    readonly code: Exclude<ApiErrorCode, 'unknown_method' | 'bad_args'>,
    message: string,
  ) {
    super(message);
    this.name = 'CoreError';
  }
}

/** The message of anything thrown. */
export function errMsg(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
