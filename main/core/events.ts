// The core's event stream (the contract's ApiEvent): runs, logs and the model's streamed answers go
// to every listener a front door registered. A listener that throws (a closed socket) is skipped.
import type { ApiEvent } from '../contract/api.js';

export type Listener = (e: ApiEvent) => void;

export class EventHub {
  private readonly listeners = new Set<Listener>();

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  emit(e: ApiEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch {
        // A broken listener (closed socket) must not stop a run.
      }
    }
  }

  log(sessionId: string | null, level: 'info' | 'warn' | 'error', message: string): void {
    this.emit({ type: 'log', sessionId, level, message, at: new Date().toISOString() });
  }
}
