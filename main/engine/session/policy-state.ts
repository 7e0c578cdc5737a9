// A strategy's learned state beside its session (`<session>/policy-state.json`, rewritten
// atomically after each measured variant), so `--resume` continues the policy where it stopped
// instead of from scratch. What the journal replays (results, duels) rebuilds the rest of a
// strategy; this keeps what cannot be rebuilt from it (the contrastive policy's logits, its stage,
// its random stream). A cache, like summary.json: missing or unreadable means "start the policy
// afresh", never an error.
import fs from 'node:fs';
import path from 'node:path';
import { writeFileAtomic } from '../base/atomic.js';

export const POLICY_STATE_FILE = 'policy-state.json';

export interface PolicyStateFile {
  v: 1;
  /** The strategy that wrote it (another strategy never reads it). */
  strategy: string;
  /** Results in the session when it was written. */
  results: number;
  state: unknown;
}

export function readPolicyState(sessionDir: string): PolicyStateFile | null {
  try {
    const d = JSON.parse(fs.readFileSync(path.join(sessionDir, POLICY_STATE_FILE), 'utf8')) as Partial<PolicyStateFile>;
    return d && d.v === 1 && typeof d.strategy === 'string' && typeof d.results === 'number' ? (d as PolicyStateFile) : null;
  } catch {
    return null;
  }
}

/** Best effort (a read-only session folder keeps working; the policy then restarts on resume). */
export function writePolicyState(sessionDir: string, f: Omit<PolicyStateFile, 'v'>): boolean {
  try {
    writeFileAtomic(path.join(sessionDir, POLICY_STATE_FILE), JSON.stringify({ v: 1, ...f }) + '\n');
    return true;
  } catch {
    return false;
  }
}
