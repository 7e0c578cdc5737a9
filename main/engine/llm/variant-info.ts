// What a variant the LLM policy proposed carries besides its source (the prompt, the model's
// analysis and design, the exemplars it was shown), kept on the journaled variant record, and how to
// read it back from a record. Read by the dataset export and the workbench's variant view.
import type { ChatMessage, LlmFailure } from './provider.js';

/** What the LLM policy keeps on each variant it proposes (VariantRecord is stored loosely, so it survives the journal). */
export interface LlmVariantInfo {
  promptId: string;
  answerId: string;
  model: string;
  /** The prompt's messages (the same for every answer of a group). */
  prompt: ChatMessage[];
  analysis: string;
  design: string;
  /** The model's whole answer (secrets removed). */
  raw: string;
  exemplars: Array<{ id: string; speedup: number }>;
  buckets: number[];
  arm?: string;
  armProbability?: number;
  /** Parts the answer did not label. */
  missing?: string[];
  /** Why the request failed (transport errors). */
  error?: LlmFailure;
  attempts?: number;
  durationMs?: number;
}

export function llmInfoOf(v: unknown): LlmVariantInfo | undefined {
  const x = (v as { llm?: unknown } | null)?.llm;
  return x && typeof x === 'object' && typeof (x as LlmVariantInfo).promptId === 'string' ? (x as LlmVariantInfo) : undefined;
}
