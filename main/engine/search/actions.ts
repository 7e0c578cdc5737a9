// The action space of the optimiser: one discrete dimension per tunable (values from the manifest,
// restrictions enforced), per compiler choice (fast math only where the task allows it,
// -maxrregcount, -dlcm, -O) and per source-transform site (see main/transforms). An action is one
// value index per dimension; `decode` turns it into a buildable variant. On a recorded space the
// action space is the recording's: only dimensions it varies, only variants it holds.
import type { BuildFlags, Config, VariantSpec } from '../base/types.js';
import type { Task } from '../task/manifest.js';
import { configKey, defaultConfig, isValidConfig } from '../task/space.js';
import { flagsKey, type ReplayMeasurer } from '../measure/replay.js';
import type { TransformCatalog } from '../source/transforms.js';
import { everyKernelHasLaunchBounds } from '../source/launch.js';

export type DimValue = number | string | null;

export interface Dim {
  name: string;
  kind: 'tunable' | 'flag' | 'transform';
  /** Possible values; for flags and transforms `null` is "not applied". Ordered (neighbours are adjacent). */
  values: DimValue[];
}

export type Action = number[];

export type Proposal = Omit<VariantSpec, 'origin'> & { origin?: string; parents?: string[] };

export interface FlagChoices {
  fastMath: boolean;
  maxrregcount: number[];
  dlcm: Array<'ca' | 'cg'>;
  opt: Array<2 | 3>;
}

/**
 * The compiler choices the issue names: fast math only where the manifest allows it, and
 * -maxrregcount only where some kernel of the baseline lacks `__launch_bounds__` (nvcc ignores the
 * flag for a kernel with bounds, so every value would build the same kernel again; the baseline's
 * transforms can add bounds, never remove them).
 */
export function defaultFlagChoices(task: Task): FlagChoices {
  const maxrregcount = everyKernelHasLaunchBounds(task.baselineSource) ? [] : [32, 64, 128];
  return { fastMath: task.manifest.fast_math === true, maxrregcount, dlcm: ['ca', 'cg'], opt: [2] };
}

export interface ActionSpaceOptions {
  /** Compiler-flag dimensions (false: flags fixed at -O3). */
  flags?: FlagChoices | false;
  /** Source-transform sites of the baseline (omit for none). */
  transforms?: TransformCatalog;
  /** Extra validity test (a replay: the variant must be in the recording). */
  filter?: (p: Proposal) => boolean;
  /** Overrides dimension lists (used for recorded spaces). */
  dims?: Dim[];
  /**
   * Tunables held at one value that are not dimensions (a recording's predated tunables at their
   * defaults): decoding and the restrictions see them, the search never does. So a tunable added to
   * a task later changes neither the space nor any strategy's random stream on an older recording.
   */
  fixed?: Config;
}

export class ActionSpace {
  readonly task: Task;
  readonly dims: Dim[];
  private readonly transforms?: TransformCatalog;
  private readonly filter?: (p: Proposal) => boolean;
  private readonly tunableNames: string[];
  private readonly fixed: Config;
  private readonly decoded = new Map<string, Proposal>();

  constructor(task: Task, o: ActionSpaceOptions = {}) {
    this.task = task;
    this.fixed = { ...(o.fixed ?? {}) };
    this.transforms = o.transforms;
    this.filter = o.filter;
    if (o.dims) this.dims = o.dims;
    else {
      const dims: Dim[] = Object.entries(task.manifest.tunables ?? {}).filter(([name]) => !(name in this.fixed)).map(([name, values]) => ({ name, kind: 'tunable' as const, values: [...values] }));
      if (o.flags) {
        if (o.flags.opt.length) dims.push({ name: 'opt', kind: 'flag', values: [3, ...o.flags.opt.filter((x) => x !== 3)] });
        if (o.flags.fastMath) dims.push({ name: 'fastMath', kind: 'flag', values: [null, 1] });
        if (o.flags.maxrregcount.length) dims.push({ name: 'maxrregcount', kind: 'flag', values: [null, ...o.flags.maxrregcount] });
        if (o.flags.dlcm.length) dims.push({ name: 'dlcm', kind: 'flag', values: [null, ...o.flags.dlcm] });
      }
      for (const site of o.transforms?.sites ?? []) dims.push({ name: site.dim, kind: 'transform', values: [null, ...site.options] });
      this.dims = dims;
    }
    this.tunableNames = this.dims.filter((d) => d.kind === 'tunable').map((d) => d.name);
  }

  /** The action space of a recorded space: the task's tunables, and the flags and transforms the recording varies. */
  static fromRecording(task: Task, m: ReplayMeasurer): ActionSpace {
    // A tunable the recording predates (ReplayMeasurer.predates) is no dimension: it stays at its default.
    const fixed = m.predatedDefaults;
    const dims: Dim[] = Object.entries(task.manifest.tunables ?? {}).filter(([name]) => !(name in fixed)).map(([name, values]) => ({ name, kind: 'tunable' as const, values: [...values] }));
    const entries = m.space.entries;
    const flagDim = (name: string, get: (f: BuildFlags) => DimValue, first: DimValue): void => {
      const vals = new Set<DimValue>(entries.map((e) => get(e.flags)));
      if (vals.size > 1) dims.push({ name, kind: 'flag', values: [first, ...[...vals].filter((v) => v !== first).sort()] });
    };
    flagDim('opt', (f) => f.opt ?? 3, 3);
    flagDim('fastMath', (f) => (f.fastMath ? 1 : null), null);
    flagDim('maxrregcount', (f) => f.maxrregcount || null, null);
    flagDim('dlcm', (f) => f.dlcm ?? null, null);
    const tdims = new Map<string, Set<string>>();
    for (const e of entries) for (const t of e.transforms ?? []) {
      const d = transformDim(t);
      if (!tdims.has(d)) tdims.set(d, new Set());
      tdims.get(d)!.add(t);
    }
    for (const [name, ids] of [...tdims].sort(([a], [b]) => a.localeCompare(b))) dims.push({ name, kind: 'transform', values: [null, ...[...ids].sort()] });
    return new ActionSpace(task, { dims, fixed, filter: (p) => m.has(p) });
  }

  get size(): number {
    return this.dims.reduce((a, d) => a * d.values.length, 1);
  }

  /** The action of a configuration / flags / transforms (null when a value is outside the space). */
  encode(p: { config: Config; flags?: BuildFlags; transforms?: string[] }): Action | null {
    for (const [k, v] of Object.entries(this.fixed)) if (p.config[k] !== undefined && p.config[k] !== v) return null;
    const full = { ...this.fullDefaults(), ...p.config };
    const out: Action = [];
    const ts = new Set(p.transforms ?? []);
    for (const d of this.dims) {
      let v: DimValue;
      if (d.kind === 'tunable') v = full[d.name];
      else if (d.kind === 'flag') v = flagValue(p.flags ?? {}, d.name);
      else v = d.values.find((x) => x !== null && ts.has(String(x))) ?? null;
      const i = d.values.indexOf(v);
      if (i < 0) return null;
      out.push(i);
    }
    return out;
  }

  /** Manifest defaults filled in for every tunable (the first value where the manifest gives none). */
  private fullDefaults(): Config {
    const dc = defaultConfig(this.task);
    const out: Config = {};
    for (const d of this.dims) if (d.kind === 'tunable') out[d.name] = dc[d.name] ?? (d.values[0] as number);
    return out;
  }

  key(a: Action): string {
    return a.join(',');
  }

  decode(a: Action): Proposal {
    const k = this.key(a);
    const hit = this.decoded.get(k);
    if (hit) return hit;
    const config: Config = { ...this.fixed };
    const flags: BuildFlags = { opt: 3 };
    const transforms: string[] = [];
    this.dims.forEach((d, i) => {
      const v = d.values[a[i]];
      if (d.kind === 'tunable') config[d.name] = v as number;
      else if (d.kind === 'flag') setFlag(flags, d.name, v);
      else if (v !== null) transforms.push(String(v));
    });
    const source = this.transforms && transforms.length ? this.transforms.apply(transforms) : this.task.baselineSource;
    const p: Proposal = { source, config, flags, ...(transforms.length ? { transforms } : {}) };
    if (this.decoded.size > 50_000) this.decoded.clear();
    this.decoded.set(k, p);
    return p;
  }

  isValid(a: Action): boolean {
    if (a.length !== this.dims.length) return false;
    for (let i = 0; i < a.length; i++) if (!(a[i] >= 0 && a[i] < this.dims[i].values.length)) return false;
    // Restrictions first, on the tunables alone: decoding (and caching) every invalid action of a
    // large product would hold millions of proposals in memory.
    if (this.tunableNames.length) {
      const config: Config = { ...this.fixed };
      this.dims.forEach((d, i) => {
        if (d.kind === 'tunable') config[d.name] = d.values[a[i]] as number;
      });
      if (!isValidConfig(this.task, config)) return false;
    }
    return this.filter ? this.filter(this.decode(a)) : true;
  }

  /** Uniform over the product, rejecting invalid actions (null after `tries` misses). */
  sample(rng: () => number, tries = 2000): Action | null {
    for (let t = 0; t < tries; t++) {
      const a = this.dims.map((d) => Math.floor(rng() * d.values.length));
      if (this.isValid(a)) return a;
    }
    return null;
  }

  /** Valid actions in lexicographic order (lazily: the product may be huge). */
  *enumerate(): Generator<Action> {
    const n = this.dims.length;
    const a: Action = new Array(n).fill(0);
    if (n === 0) return;
    for (;;) {
      if (this.isValid(a)) yield [...a];
      let i = n - 1;
      while (i >= 0 && ++a[i] >= this.dims[i].values.length) a[i--] = 0;
      if (i < 0) return;
    }
  }

  /** Valid actions that differ from `a` in one dimension by one step (ordered values). */
  neighbours(a: Action): Action[] {
    const out: Action[] = [];
    this.dims.forEach((d, i) => {
      for (const s of [-1, 1]) {
        const j = a[i] + s;
        if (j < 0 || j >= d.values.length) continue;
        const b = [...a];
        b[i] = j;
        if (this.isValid(b)) out.push(b);
      }
    });
    return out;
  }

  /** The baseline's action (defaults; flags -O3; no transforms), when it is in the space. */
  baseline(): Action | null {
    return this.encode({ config: defaultConfig(this.task), flags: { opt: 3 } });
  }

  /** Key of a proposal independent of dims order (for de-duplication against the session). */
  static proposalId(p: { config: Config; flags?: BuildFlags; transforms?: string[] }): string {
    return `${configKey(p.config)}|${flagsKey(p.flags)}|${[...(p.transforms ?? [])].sort().join(';')}`;
  }
}

/** The dimension a transform id belongs to: `unroll@k/for2=4` -> `unroll@k/for2`; others are their own dimension. */
export function transformDim(id: string): string {
  const i = id.indexOf('=');
  return i < 0 ? id : id.slice(0, i);
}

function flagValue(f: BuildFlags, name: string): DimValue {
  switch (name) {
    case 'opt':
      return f.opt ?? 3;
    case 'fastMath':
      return f.fastMath ? 1 : null;
    case 'maxrregcount':
      return f.maxrregcount || null;
    case 'dlcm':
      return f.dlcm ?? null;
    default:
      return null;
  }
}

function setFlag(f: BuildFlags, name: string, v: DimValue): void {
  if (v === null) return;
  if (name === 'opt') f.opt = v as 2 | 3;
  else if (name === 'fastMath') f.fastMath = true;
  else if (name === 'maxrregcount') f.maxrregcount = v as number;
  else if (name === 'dlcm') f.dlcm = v as 'ca' | 'cg';
}
