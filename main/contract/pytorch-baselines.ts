// The PyTorch baselines of a session as sessions.get sends them (PytorchBaselinesDTO), checked with
// zod where the renderer decodes the payload (decodeSession): a malformed record is an error naming
// the field, never a line drawn from it. Importable by the renderer: zod and plain types only.
import { z } from 'zod';
import { PytorchBaselinesSchema } from '../engine/base/pytorch-baselines.js';
import type { PytorchBaselinesDTO } from './api.js';

const Speedup = z.number().positive().nullable();

export const PytorchBaselinesDTOSchema: z.ZodType<PytorchBaselinesDTO> = PytorchBaselinesSchema.extend({ guaranteeTitle: z.string(), eagerSpeedup: Speedup, compileSpeedup: Speedup, figure: z.enum(['per-call', 'one-call']).optional() })
  .refine((b) => b.compile !== null || b.compileNote !== null, { message: 'torch.compile has neither a time nor a note saying why not', path: ['compileNote'] });

/** The payload's baselines, checked (null when the session has none). */
export function parsePytorchBaselines(x: unknown): PytorchBaselinesDTO | null {
  if (x === undefined || x === null) return null;
  const p = PytorchBaselinesDTOSchema.safeParse(x);
  if (p.success) return p.data;
  const i = p.error.issues[0];
  throw new Error(`sessions.get: the session's payload is malformed (pytorchBaselines.${i.path.join('.')}: ${i.message})`);
}
