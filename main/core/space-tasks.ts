// The workbench's view of recorded spaces without kernel source (imported from another tuner,
// e.g. with `kernelduel import kernel-tuner`): each is listed as a task of its own that can only
// be replayed (no source to edit, build or run on a GPU), so its tuning results open in the plots
// and the history tree like any replayed session. Found in the same folders as other recordings;
// each file is read once per modification (they can be tens of MB).
import fs from 'node:fs';
import path from 'node:path';
import { createHash } from 'node:crypto';
import YAML from 'yaml';
import { RECORDED_TABLE_ROWS, type RecordedTable, type TaskDetail, type TaskSummary } from '../contract/api.js';
import { loadSpace, type RecordedSpace } from '../engine/measure/replay.js';
import { isSourceFree, originLabel, spaceTask } from '../engine/measure/space-task.js';
import type { Task } from '../engine/task/manifest.js';
import { configKey } from '../engine/task/space.js';

export interface SpaceTaskEntry {
  id: string;
  file: string;
  space: RecordedSpace;
  task: Task;
}

export function spaceTaskId(file: string): string {
  return `space:${createHash('sha256').update(path.resolve(file)).digest('hex').slice(0, 12)}`;
}

/** Recording files under the roots: <root>/<gpu>/<name>.json and <root>/<name>.json. */
function recordingFiles(roots: readonly string[]): string[] {
  const out: string[] = [];
  for (const r of roots) {
    let items: fs.Dirent[];
    try {
      items = fs.readdirSync(r, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const it of items) {
      if (it.isFile() && it.name.endsWith('.json')) out.push(path.join(r, it.name));
      else if (it.isDirectory()) {
        try {
          for (const f of fs.readdirSync(path.join(r, it.name))) if (f.endsWith('.json')) out.push(path.join(r, it.name, f));
        } catch {
          // an unreadable folder holds no recordings we can offer
        }
      }
    }
  }
  return out.sort();
}

/** Whether a file's head names its own tunables before its entries (a source-free space), read without parsing the whole file. */
function looksSourceFree(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = fs.openSync(file, 'r');
    const buf = Buffer.alloc(64 * 1024);
    const head = buf.subarray(0, fs.readSync(fd, buf, 0, buf.length, 0)).toString('utf8');
    const e = head.indexOf('"entries"');
    const t = head.indexOf('"tunables"');
    return t >= 0 && (e < 0 || t < e);
  } catch {
    return false;
  } finally {
    if (fd !== undefined) fs.closeSync(fd);
  }
}

export class SpaceTasks {
  private readonly cache = new Map<string, { mtimeMs: number; entry: SpaceTaskEntry | null }>();

  constructor(private readonly roots: () => string[]) {}

  /** Every source-free recorded space under the roots (unreadable or invalid files are skipped). */
  list(): SpaceTaskEntry[] {
    const out: SpaceTaskEntry[] = [];
    for (const file of recordingFiles(this.roots())) {
      let mtimeMs: number;
      try {
        mtimeMs = fs.statSync(file).mtimeMs;
      } catch {
        continue;
      }
      const hit = this.cache.get(file);
      if (hit && hit.mtimeMs === mtimeMs) {
        if (hit.entry) out.push(hit.entry);
        continue;
      }
      let entry: SpaceTaskEntry | null = null;
      if (looksSourceFree(file)) {
        try {
          const space = loadSpace(file);
          if (isSourceFree(space)) entry = { id: spaceTaskId(file), file, space, task: spaceTask(space, file) };
        } catch {
          entry = null;
        }
      }
      this.cache.set(file, { mtimeMs, entry });
      if (entry) out.push(entry);
    }
    return out;
  }

  get(id: string): SpaceTaskEntry | undefined {
    return this.list().find((e) => e.id === id);
  }
}

export function spaceTaskSummary(e: SpaceTaskEntry): TaskSummary {
  return {
    id: e.id, name: e.task.manifest.name, description: e.task.manifest.description ?? '', dir: e.file, builtin: false,
    spaceSize: e.space.entries.length, tunables: e.space.tunables ?? {}, recordings: [e.file],
    replayOnly: `REPLAY only: ${originLabel(e.space)}; no kernel source`,
  };
}

/** The task view: its tunables and baseline as a read-only manifest; no kernel or reference source. */
export function spaceTaskDetail(e: SpaceTaskEntry): TaskDetail {
  const m = e.task.manifest;
  const text = YAML.stringify({ name: m.name, description: m.description, tunables: m.tunables, defaults: m.defaults, recorded: { gpu: e.space.gpu.name, date: e.space.date, file: e.file, configurations: e.space.entries.length } });
  return {
    ...spaceTaskSummary(e), readOnly: true, files: { manifest: path.basename(e.file), kernel: 'recorded configurations', reference: '(no reference)' },
    manifestText: text, kernel: '', reference: '', entrySignature: null, defaults: { ...(m.defaults ?? {}) }, sizes: [],
    recorded: recordedTable(e.space),
  };
}

/** The recording's timed configurations fastest first (the first RECORDED_TABLE_ROWS), its failures counted, and where the baseline ranks. */
export function recordedTable(space: RecordedSpace): RecordedTable {
  const timed = space.entries.filter((x): x is typeof x & { medianMs: number } => x.medianMs !== null).sort((a, b) => a.medianMs - b.medianMs);
  const best = timed[0]?.medianMs ?? null;
  const baseKey = space.baseline ? configKey(space.baseline) : null;
  const isBase = (c: Record<string, number>): boolean => configKey(c) === baseKey;
  const fastest = best === null ? [] : timed.slice(0, RECORDED_TABLE_ROWS).map((x) => ({ config: { ...x.config }, medianMs: x.medianMs, ofBest: best / x.medianMs, baseline: isBase(x.config) }));
  const rank = timed.findIndex((x) => isBase(x.config));
  return {
    gpu: space.gpu.name, configurations: space.entries.length, failed: space.entries.length - timed.length,
    time: space.objective === 'kernel-tuner-time' ? 'mean (Kernel Tuner time)' : 'median', fastest,
    baseline: best !== null && rank >= RECORDED_TABLE_ROWS ? { config: { ...timed[rank].config }, medianMs: timed[rank].medianMs, ofBest: best / timed[rank].medianMs, rank: rank + 1 } : null,
  };
}
