// The tasks the workbench offers: the built-in ones (resources/tasks/) and folders the user opened
// (remembered in $KERNELDUEL_HOME/opened-tasks.json), each under an id this registry issued. Reads
// and writes only a task's own files, and never a built-in task's. Recorded spaces without kernel
// source (imported from another tuner) are listed too, as REPLAY-only tasks (space-tasks.ts).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createHash } from 'node:crypto';
import type { ManifestIssueDTO, TaskDetail, TaskSummary } from '../contract/api.js';
import { builtinTasksDir, kernelduelHome, resourcesDir } from '../engine/base/paths.js';
import { builtinTaskNames } from '../engine/task/resolve.js';
import { findManifest, loadTask, parseManifest, TaskError, type Task } from '../engine/task/manifest.js';
import { defaultConfig, enumerateSpace } from '../engine/task/space.js';
import { describeReach, spaceReach } from '../engine/task/reach.js';
import { entrySignature } from '../engine/source/entry.js';
import { isSpaceTask } from '../engine/measure/space-task.js';
import { CoreError, errMsg } from './errors.js';
import { SpaceTasks, spaceTaskDetail, spaceTaskSummary } from './space-tasks.js';

export type TaskFileKind = 'kernel' | 'reference' | 'manifest';

/** Path `p` lies inside folder `dir` (after resolving symbolic links of both). */
export function isInside(dir: string, p: string): boolean {
  const real = (x: string): string => {
    try {
      return fs.realpathSync(x);
    } catch {
      return path.resolve(x);
    }
  };
  const rel = path.relative(real(dir), real(p));
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

function folderTaskId(dir: string): string {
  return `folder:${createHash('sha256').update(path.resolve(dir)).digest('hex').slice(0, 12)}`;
}

function issuesOf(e: unknown): ManifestIssueDTO[] | undefined {
  return e instanceof TaskError ? e.issues.map((i) => ({ field: i.field, message: i.message, line: i.line })) : undefined;
}

const issueDTOs = (issues: Array<{ field: string; message: string; line?: number }>): ManifestIssueDTO[] => issues.map((i) => ({ field: i.field, message: i.message, line: i.line }));

/** Where recorded spaces are: bench/spaces in the checkout and $KERNELDUEL_HOME/spaces. */
function recordingRoots(env: NodeJS.ProcessEnv): string[] {
  return [path.join(path.dirname(resourcesDir()), 'bench', 'spaces'), path.join(kernelduelHome(env), 'spaces')];
}

/** Recorded spaces for a task: bench/spaces/<gpu>/<task>.json in the checkout and $KERNELDUEL_HOME/spaces. */
export function recordingsFor(taskName: string, env: NodeJS.ProcessEnv = process.env): string[] {
  const roots = recordingRoots(env);
  const out: string[] = [];
  for (const r of roots) {
    let gpus: fs.Dirent[];
    try {
      gpus = fs.readdirSync(r, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const g of gpus) {
      const f = g.isDirectory() ? path.join(r, g.name, `${taskName}.json`) : g.name === `${taskName}.json` ? path.join(r, g.name) : '';
      if (f && fs.existsSync(f)) out.push(f);
    }
  }
  return out;
}

export class TaskRegistry {
  private readonly opened = new Map<string, string>();
  /** Recorded spaces without kernel source, listed as REPLAY-only tasks. */
  private readonly spaceTasks: SpaceTasks;

  constructor(private readonly env: NodeJS.ProcessEnv) {
    this.spaceTasks = new SpaceTasks(() => recordingRoots(this.env));
    for (const dir of this.readOpened()) this.opened.set(folderTaskId(dir), dir);
  }

  private openedFile(): string {
    return path.join(kernelduelHome(this.env), 'opened-tasks.json');
  }

  private readOpened(): string[] {
    try {
      const x: unknown = JSON.parse(fs.readFileSync(this.openedFile(), 'utf8'));
      return Array.isArray(x) ? x.filter((d): d is string => typeof d === 'string' && fs.existsSync(d)) : [];
    } catch {
      return [];
    }
  }

  private rememberOpened(): void {
    try {
      fs.mkdirSync(path.dirname(this.openedFile()), { recursive: true });
      fs.writeFileSync(this.openedFile(), JSON.stringify([...this.opened.values()], null, 2));
    } catch {
      // Remembering opened folders is a convenience; failing to is not an error of the call.
    }
  }

  /** The folder of a task id; throws not_found for ids this registry never issued. */
  dirOf(taskId: string): { dir: string; builtin: boolean } {
    if (taskId.startsWith('space:')) throw new CoreError('forbidden', `${taskId} is a recorded space without kernel source: it has no task files to read or edit, only a recording to replay`);
    if (taskId.startsWith('folder:')) {
      const dir = this.opened.get(taskId);
      if (!dir) throw new CoreError('not_found', `no opened task ${taskId}: open its folder first`);
      return { dir, builtin: false };
    }
    if (!builtinTaskNames().includes(taskId)) throw new CoreError('not_found', `no built-in task "${taskId}" (built-in: ${builtinTaskNames().join(', ')})`);
    return { dir: path.join(builtinTasksDir(), taskId), builtin: true };
  }

  load(taskId: string): Task {
    if (taskId.startsWith('space:')) {
      const e = this.spaceTasks.get(taskId);
      if (!e) throw new CoreError('not_found', `no recorded space ${taskId} (import one with: kernelduel import kernel-tuner <cache.json>)`);
      return e.task;
    }
    return loadTask(this.dirOf(taskId).dir);
  }

  /** A task with kernel source, for what builds or asks a model; a recorded space's own task is refused. */
  loadWithSource(taskId: string): Task {
    const t = this.load(taskId);
    if (isSpaceTask(t)) throw new CoreError('failed', `${t.manifest.name} is a recorded space without kernel source: it can only be replayed (choose its REPLAY recording)`);
    return t;
  }

  recordingsFor(taskName: string): string[] {
    return recordingsFor(taskName, this.env);
  }

  /** The recordings a run of this task may replay: a recorded space's own file, else the task's recordings. */
  recordingsOf(task: Task): string[] {
    return isSpaceTask(task) ? [task.dir] : this.recordingsFor(task.manifest.name);
  }

  list(): TaskSummary[] {
    const out: TaskSummary[] = builtinTaskNames().map((n) => this.summary(n, path.join(builtinTasksDir(), n), true));
    for (const [id, dir] of this.opened) out.push(this.summary(id, dir, false));
    for (const e of this.spaceTasks.list()) out.push(spaceTaskSummary(e));
    return out;
  }

  get(taskId: string): TaskDetail {
    if (taskId.startsWith('space:')) {
      const e = this.spaceTasks.get(taskId);
      if (!e) throw new CoreError('not_found', `no recorded space ${taskId}`);
      return spaceTaskDetail(e);
    }
    const { dir, builtin } = this.dirOf(taskId);
    return this.detail(taskId, dir, builtin);
  }

  /** Opens a task folder (a built-in one under its own id) and remembers it. */
  open(dirArg: string): TaskDetail {
    const dir = path.resolve(dirArg.replace(/^~(?=$|\/)/, os.homedir()));
    if (!fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) throw new CoreError('not_found', `${dir} is not a folder (a task is a folder holding task.yaml, reference.cu and kernel.cu)`);
    if (!findManifest(dir)) throw new CoreError('not_found', `${dir} has no task.yaml: it is not a task folder (see docs/TASK-FORMAT.md)`);
    const builtinName = builtinTaskNames().find((n) => path.join(builtinTasksDir(), n) === dir);
    if (builtinName) return this.detail(builtinName, dir, true);
    const id = folderTaskId(dir);
    this.opened.set(id, dir);
    this.rememberOpened();
    return this.detail(id, dir, false);
  }

  validateManifest(text: string): { ok: boolean; issues: ManifestIssueDTO[] } {
    const { issues } = parseManifest(text);
    return { ok: issues.length === 0, issues: issueDTOs(issues) };
  }

  readFile(taskId: string, file: TaskFileKind): { path: string; text: string } {
    const f = this.file(taskId, file);
    try {
      return { path: f.path, text: fs.readFileSync(f.path, 'utf8') };
    } catch (e) {
      throw new CoreError('not_found', `cannot read ${f.path} (${(e as NodeJS.ErrnoException).code ?? errMsg(e)})`);
    }
  }

  saveFile(taskId: string, file: TaskFileKind, text: string): { path: string; issues: ManifestIssueDTO[] } {
    const f = this.file(taskId, file);
    if (f.builtin) throw new CoreError('forbidden', `built-in tasks are read-only: copy ${f.dir} to a folder of your own and open that`);
    if (f.pytorch && file === 'reference') throw new CoreError('forbidden', `${path.basename(f.path)} is the task's trusted PyTorch reference: the workbench shows it read-only (edit it outside, then check the task with kernelduel eval)`);
    fs.writeFileSync(f.path, text);
    const issues = file === 'manifest' ? parseManifest(text, path.basename(f.path)).issues : [];
    return { path: f.path, issues: issueDTOs(issues) };
  }

  private summary(id: string, dir: string, builtin: boolean): TaskSummary {
    try {
      const t = loadTask(dir);
      let spaceSize: number | null = null;
      let spaceNote: string | null = null;
      try {
        const configs = enumerateSpace(t);
        spaceSize = configs.length;
        spaceNote = describeReach(t, spaceReach(t, configs));
      } catch {
        spaceSize = null;
      }
      return { id, name: t.manifest.name, description: t.manifest.description ?? '', dir, builtin, spaceSize, ...(spaceNote ? { spaceNote } : {}), tunables: t.manifest.tunables ?? {}, recordings: this.recordingsFor(t.manifest.name) };
    } catch (e) {
      return { id, name: path.basename(dir), description: '', dir, builtin, spaceSize: null, tunables: {}, recordings: [], error: errMsg(e), issues: issuesOf(e) };
    }
  }

  /** A task file's path, checked to lie inside the task folder. */
  private file(taskId: string, file: TaskFileKind): { path: string; builtin: boolean; dir: string; pytorch: boolean } {
    const { dir, builtin } = this.dirOf(taskId);
    const manifestPath = findManifest(dir) ?? path.join(dir, 'task.yaml');
    let p = manifestPath;
    let m: { files?: { reference?: string; baseline?: string }; reference?: { pytorch?: string } } | undefined;
    try {
      m = parseManifest(fs.readFileSync(manifestPath, 'utf8')).manifest;
    } catch {
      m = undefined;
    }
    // A PyTorch task's reference is its Python module (reference.pytorch).
    if (file !== 'manifest') p = path.join(dir, file === 'kernel' ? (m?.files?.baseline ?? 'kernel.cu') : (m?.reference?.pytorch ?? m?.files?.reference ?? 'reference.cu'));
    if (!isInside(dir, p)) throw new CoreError('forbidden', `${p} is outside the task folder ${dir}: KernelDuel only reads and writes a task's own files`);
    return { path: p, builtin, dir, pytorch: !!m?.reference?.pytorch };
  }

  private detail(id: string, dir: string, builtin: boolean): TaskDetail {
    const s = this.summary(id, dir, builtin);
    const read = (f: TaskFileKind): { name: string; text: string } => {
      const p = this.file(id, f).path;
      let text: string;
      try {
        text = fs.readFileSync(p, 'utf8');
      } catch {
        text = '';
      }
      return { name: path.basename(p), text };
    };
    const m = read('manifest');
    const k = read('kernel');
    const r = read('reference');
    const pytorch = this.file(id, 'reference').pytorch;
    let sig: string | null;
    let defaults = {};
    let sizes: Array<Record<string, number>> = [];
    try {
      const t = loadTask(dir);
      sig = entrySignature(t);
      defaults = defaultConfig(t);
      sizes = t.manifest.sizes;
    } catch {
      sig = null;
    }
    const issues = issueDTOs(parseManifest(m.text, m.name).issues);
    return {
      ...s, issues: issues.length ? issues : s.issues, readOnly: builtin, files: { manifest: m.name, kernel: k.name, reference: r.name },
      manifestText: m.text, kernel: k.text, reference: r.text, entrySignature: sig, pytorch, defaults, sizes,
    };
  }
}
