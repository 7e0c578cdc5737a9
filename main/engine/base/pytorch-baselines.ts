// The one schema of a session's PyTorch baselines record (PytorchBaselines in ./types.ts): the
// journal checks its `pytorch-baselines` events with it (engine/session/events.ts), and the API
// contract extends it for what sessions.get sends (contract/pytorch-baselines.ts). zod only.
import { z } from 'zod';
import type { PytorchBaselines } from './types.js';

const TimeSchema = z.object({
  medianMs: z.number().positive(), timer: z.enum(['events', 'wall']), samples: z.number().int().nonnegative(),
  gpuMs: z.number().positive().optional(), hostCallMs: z.number().nonnegative().optional(), perCallMs: z.number().positive().optional(),
});

export const PytorchBaselinesSchema = z.object({
  size: z.number().int().nonnegative(),
  device: z.enum(['cuda', 'cpu']),
  deviceName: z.string(),
  torch: z.string().nullable(),
  guarantee: z.enum(['isolated', 'python-in-process', 'trusted-python']),
  eager: TimeSchema.nullable(),
  compile: TimeSchema.extend({ compileS: z.number().nonnegative() }).nullable(),
  compileNote: z.string().nullable(),
  failure: z.string().nullable(),
  measuredAt: z.string(),
});

// The schema gives exactly the record's type.
const _sameType: z.ZodType<PytorchBaselines> = PytorchBaselinesSchema;
void _sameType;
