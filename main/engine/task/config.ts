// A configuration the user gives (`--config K=V,...`) checked against the task's tunables, and the
// configuration a variant file is built with. Pure: the task and the source text in, plain data out.
//
// A variant file may #define tunables itself (an exported variant does, each under #ifndef): those
// values are the file's, so the task's defaults are not passed for them as -D (which would win
// over an #ifndef-guarded #define and silently rebuild the baseline's configuration). Values given
// with --config are passed, and win over a guarded #define.
import type { Config } from '../base/types.js';
import { evalExpr } from '../base/expr.js';
import type { Task } from './manifest.js';
import { defaultConfig } from './space.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/**
 * Refuses a name that is no tunable of the task, and (unless `allowOffList`) a value outside its
 * tunable's list, naming the valid names or values and what to do; returns the values allowed
 * anyway (`NAME=value is not one of ...`).
 */
export function checkConfig(task: Task, given: Config, o: { allowOffList?: boolean } = {}): string[] {
  const tunables = task.manifest.tunables ?? {};
  const names = [...new Set([...Object.keys(tunables), ...Object.keys(task.manifest.defaults ?? {})])];
  const offList: string[] = [];
  for (const [k, v] of Object.entries(given)) {
    if (!names.includes(k)) {
      throw new ConfigError(
        names.length
          ? `--config ${k}=${v}: task ${task.manifest.name} has no tunable ${k} (its tunables: ${names.join(', ')})`
          : `--config ${k}=${v}: task ${task.manifest.name} has no tunables (${task.manifestPath} lists none)`,
      );
    }
    const list = tunables[k];
    if (list && !list.includes(v)) {
      const what = `${k}=${v} is not one of ${k}'s values (${list.join(', ')}) in ${task.manifestPath}`;
      if (!o.allowOffList) throw new ConfigError(`--config ${what}; choose one of them, or pass --allow-off-list to build it anyway`);
      offList.push(what);
    }
  }
  return offList;
}

/** The restrictions of task.yaml a configuration breaks (those it cannot evaluate are left out). */
export function brokenRestrictions(task: Task, c: Config): string[] {
  const scope = { ...task.manifest.sizes[task.timed[0]], ...c };
  return (task.manifest.restrictions ?? []).filter((r) => {
    try {
      return evalExpr(r, scope) === 0;
    } catch {
      return false;
    }
  });
}

/** Where a value of the configuration a variant is built with comes from. */
export type ConfigOrigin = 'task defaults' | 'the file' | '--config';

export interface VariantConfig {
  /** Passed to nvcc as -D (the variant's `config`). */
  defines: Config;
  /** Every tunable's value as built (the file's #define text when it is not a number), and where it comes from. */
  effective: Array<{ name: string; value: string; from: ConfigOrigin }>;
  /** --config values a #define of the file without #ifndef overrides (nvcc warns; the file's value is built). */
  overridden: string[];
}

/** The `#define NAME value` lines of a source for the given names, and whether an `#ifndef NAME` guards each. */
export function sourceDefines(source: string, names: readonly string[]): Map<string, { value: string; guarded: boolean }> {
  const out = new Map<string, { value: string; guarded: boolean }>();
  for (const name of names) {
    const m = new RegExp(`^[ \\t]*#[ \\t]*define[ \\t]+${name}[ \\t]+([^\\n]*?)[ \\t]*(?://[^\\n]*)?$`, 'm').exec(source);
    if (!m) continue;
    const guarded = new RegExp(`^[ \\t]*#[ \\t]*(ifndef[ \\t]+${name}\\b|if[ \\t]+!\\s*defined\\s*\\(?\\s*${name}\\b)`, 'm').test(source.slice(0, m.index));
    out.set(name, { value: m[1].replace(/\/\*.*?\*\//g, '').trim(), guarded });
  }
  return out;
}

/**
 * The configuration a variant's source is built with: the task's defaults for the tunables it does
 * not #define itself (`fromFile`: a user's file; the baseline takes the defaults as before), its own
 * #defines, and the --config values on top.
 */
export function variantConfig(task: Task, source: string, given: Config, o: { fromFile: boolean }): VariantConfig {
  const defaults = defaultConfig(task);
  const names = [...new Set([...Object.keys(task.manifest.tunables ?? {}), ...Object.keys(defaults), ...Object.keys(given)])];
  const own = o.fromFile ? sourceDefines(source, names) : new Map<string, { value: string; guarded: boolean }>();
  const defines: Config = {};
  const effective: VariantConfig['effective'] = [];
  const overridden: string[] = [];
  for (const name of names) {
    const f = own.get(name);
    if (given[name] !== undefined) {
      defines[name] = given[name];
      if (f && !f.guarded) {
        overridden.push(`${name}=${given[name]} (the file's own #define ${name} ${f.value} has no #ifndef, so it is built with ${f.value})`);
        effective.push({ name, value: f.value, from: 'the file' });
      } else effective.push({ name, value: String(given[name]), from: '--config' });
    } else if (f) effective.push({ name, value: f.value, from: 'the file' });
    else if (defaults[name] !== undefined) {
      defines[name] = defaults[name];
      effective.push({ name, value: String(defaults[name]), from: 'task defaults' });
    }
  }
  return { defines, effective, overridden };
}
