// Exports a session's (prompt, answer, reward) triples as JSONL for offline RL fine-tuning:
// one line per answer, grouped GRPO-style by prompt (all answers to one prompt are consecutive and
// share `group_id`), with the group-normalised advantage already computed.
import { writeFileSync } from 'node:fs';
import type { Session } from '../session/store.js';
import { isTimedSuccess, timedMedianMs } from '../measure/verdict.js';
import { llmInfoOf } from './variant-info.js';
import type { ChatMessage } from './provider.js';
import { redactSecrets } from './provider.js';

export interface DatasetRow {
  group_id: string;
  group_size: number;
  task: string;
  session: string;
  variant_id: string;
  model: string;
  prompt: ChatMessage[];
  completion: { analysis: string; design: string; code: string; raw: string };
  /** Speedup over the baseline; 0 for an answer that failed (unparseable, rejected, wrong, not building); null when not measured (compile-only). */
  reward: number | null;
  status: 'measured' | 'failed' | 'unmeasured';
  failure?: { kind: string; reason: string };
  /** (reward − group mean) / group std over the group's non-null rewards; null when undefined. */
  advantage: number | null;
}

export function buildDataset(session: Session, o: { secrets?: string[] } = {}): DatasetRow[] {
  const base = session.variants().find((v) => v.origin === 'baseline');
  const baseR = base ? session.resultOf(base.id) : undefined;
  const baseMs = timedMedianMs(baseR);
  const groups = new Map<string, DatasetRow[]>();
  for (const v of session.variants()) {
    const info = llmInfoOf(v);
    if (!info) continue;
    if (info.error && !info.raw) continue; // no answer arrived: nothing to learn from
    const r = session.resultOf(v.id);
    let reward: number | null = null;
    let status: DatasetRow['status'] = 'unmeasured';
    if (r?.failure) {
      reward = 0;
      status = 'failed';
    } else if (isTimedSuccess(r) && baseMs) {
      reward = baseMs / r.timing[0].medianMs;
      status = 'measured';
    }
    const row: DatasetRow = {
      group_id: info.promptId, group_size: 0, task: session.meta.task.name, session: session.meta.id, variant_id: v.id, model: info.model, prompt: info.prompt,
      completion: { analysis: info.analysis, design: info.design, code: v.source, raw: info.raw }, reward, status,
      ...(r?.failure ? { failure: { kind: r.failure.kind, reason: r.failure.reason } } : {}), advantage: null,
    };
    const g = groups.get(info.promptId) ?? [];
    g.push(row);
    groups.set(info.promptId, g);
  }
  const rows: DatasetRow[] = [];
  for (const g of groups.values()) {
    const rs = g.map((x) => x.reward).filter((x): x is number => x !== null);
    const mean = rs.reduce((a, b) => a + b, 0) / (rs.length || 1);
    const sd = Math.sqrt(rs.reduce((a, b) => a + (b - mean) ** 2, 0) / (rs.length || 1));
    for (const row of g) {
      row.group_size = g.length;
      row.advantage = row.reward === null || rs.length < 2 ? null : sd > 0 ? (row.reward - mean) / sd : 0;
      rows.push(row);
    }
  }
  return redactSecrets(rows, o.secrets ?? []);
}

/** Writes the dataset; returns the counts. */
export function writeDataset(session: Session, file: string, o: { secrets?: string[] } = {}): { path: string; rows: number; groups: number; measured: number } {
  const rows = buildDataset(session, o);
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + (rows.length ? '\n' : ''));
  return { path: file, rows: rows.length, groups: new Set(rows.map((r) => r.group_id)).size, measured: rows.filter((r) => r.status === 'measured').length };
}
