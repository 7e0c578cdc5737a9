#!/usr/bin/env node
// The import graph of main/, preload/ and renderer/ at the level of layers (scripts/layers.mjs):
// prints every edge between two layers with how many imports make it, then fails (exit 1) on a
// cycle, an upward or sideways edge (to a layer of the same or a higher rank), an edge the table
// does not allow, a value import where only types are allowed, or a file in no layer. The lint
// rules say the same file by file; this shows the whole picture. `--json` prints it as JSON.
//
// Imports are read with TypeScript's parser: static imports and re-exports (type-only ones marked),
// and dynamic import() calls; packages are ignored.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { LAYERS, layerByName, layerOf } from './layers.mjs';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function sourceFiles(root, dir) {
  const out = [];
  const walk = (d) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|tsx)$/.test(e.name) && !e.name.endsWith('.d.ts')) out.push(p);
    }
  };
  if (fs.existsSync(path.join(root, dir))) walk(path.join(root, dir));
  return out;
}

/** Relative imports of one file: [{ spec, typeOnly }]. */
function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, false, file.endsWith('x') ? ts.ScriptKind.TSX : ts.ScriptKind.TS);
  const found = [];
  const visit = (n) => {
    if ((ts.isImportDeclaration(n) || ts.isExportDeclaration(n)) && n.moduleSpecifier && ts.isStringLiteral(n.moduleSpecifier)) {
      let typeOnly;
      if (ts.isImportDeclaration(n)) {
        const c = n.importClause;
        typeOnly = !!c && (c.isTypeOnly || (!c.name && !!c.namedBindings && ts.isNamedImports(c.namedBindings) && c.namedBindings.elements.length > 0 && c.namedBindings.elements.every((e) => e.isTypeOnly)));
      } else typeOnly = n.isTypeOnly || (!!n.exportClause && ts.isNamedExports(n.exportClause) && n.exportClause.elements.length > 0 && n.exportClause.elements.every((e) => e.isTypeOnly));
      found.push({ spec: n.moduleSpecifier.text, typeOnly });
    } else if (ts.isCallExpression(n) && n.expression.kind === ts.SyntaxKind.ImportKeyword && n.arguments.length === 1 && ts.isStringLiteral(n.arguments[0])) {
      found.push({ spec: n.arguments[0].text, typeOnly: false });
    } else if (ts.isImportTypeNode(n) && ts.isLiteralTypeNode(n.argument) && ts.isStringLiteral(n.argument.literal)) {
      found.push({ spec: n.argument.literal.text, typeOnly: true });
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return found.filter((x) => x.spec.startsWith('.'));
}

function resolveSpec(from, spec) {
  const base = path.resolve(path.dirname(from), spec);
  for (const c of [base, base.replace(/\.js$/, '.ts'), base.replace(/\.js$/, '.tsx'), `${base}.ts`, `${base}.tsx`, path.join(base, 'index.ts')]) {
    if (fs.existsSync(c) && fs.statSync(c).isFile()) return c;
  }
  return null;
}

/** The layer-to-layer graph of the tree at `root` (default: this repository) and what is wrong with it. */
export function importGraph(root = REPO) {
  const rel = (p) => path.relative(root, p).split(path.sep).join('/');
  const files = ['main', 'preload', 'renderer/src'].flatMap((d) => sourceFiles(root, d));
  const problems = [];
  /** key "a -> b" -> { from, to, count, typeOnly (all of them), examples } */
  const edges = new Map();
  for (const f of files) {
    const from = layerOf(rel(f));
    if (!from) {
      problems.push(`${rel(f)} is in no layer: give its folder a row in scripts/layers.mjs`);
      continue;
    }
    for (const imp of importsOf(f)) {
      const target = resolveSpec(f, imp.spec);
      if (!target) {
        problems.push(`${rel(f)}: cannot resolve ${imp.spec}`);
        continue;
      }
      const to = layerOf(rel(target));
      if (!to) {
        problems.push(`${rel(f)} imports ${rel(target)}, which is in no layer`);
        continue;
      }
      if (to === from) continue;
      const key = `${from.name} -> ${to.name}`;
      const e = edges.get(key) ?? { from: from.name, to: to.name, count: 0, typeOnly: true, files: [] };
      e.count++;
      e.typeOnly &&= imp.typeOnly;
      e.files.push({ file: rel(f), target: rel(target), typeOnly: imp.typeOnly });
      edges.set(key, e);
    }
  }
  for (const e of edges.values()) {
    const a = layerByName.get(e.from);
    const b = layerByName.get(e.to);
    const one = e.files[0];
    if (b.rank >= a.rank) problems.push(`${b.rank > a.rank ? 'upward' : 'sideways'} edge ${e.from} -> ${e.to} (${one.file} imports ${one.target})`);
    const allowed = a.allow.includes(e.to);
    const typesAllowed = (a.typesFrom ?? []).includes(e.to);
    for (const x of e.files) {
      if (!allowed && !(typesAllowed && x.typeOnly)) {
        problems.push(`${e.from} may not import ${typesAllowed ? 'values from ' : ''}${e.to}: ${x.file} imports ${x.target}`);
      } else if (allowed && a.only?.[e.to] && !a.only[e.to].includes(x.target)) {
        problems.push(`${e.from} may import only ${a.only[e.to].join(', ')} of ${e.to}: ${x.file} imports ${x.target}`);
      }
    }
  }
  // Cycles between layers (Tarjan's strongly connected components).
  const adj = new Map(LAYERS.map((l) => [l.name, []]));
  for (const e of edges.values()) adj.get(e.from).push(e.to);
  let index = 0;
  const idx = new Map();
  const low = new Map();
  const stack = [];
  const on = new Set();
  const cycles = [];
  const strong = (v) => {
    idx.set(v, index);
    low.set(v, index++);
    stack.push(v);
    on.add(v);
    for (const w of adj.get(v)) {
      if (!idx.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
    }
    if (low.get(v) === idx.get(v)) {
      const comp = [];
      let w;
      do {
        w = stack.pop();
        on.delete(w);
        comp.push(w);
      } while (w !== v);
      if (comp.length > 1) cycles.push(comp.reverse());
    }
  };
  for (const l of LAYERS) if (!idx.has(l.name)) strong(l.name);
  for (const c of cycles) problems.push(`cycle between ${c.join(', ')}`);
  const list = [...edges.values()].sort((x, y) => layerByName.get(y.from).rank - layerByName.get(x.from).rank || x.from.localeCompare(y.from) || layerByName.get(y.to).rank - layerByName.get(x.to).rank);
  return { files: files.length, edges: list, cycles, problems };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const g = importGraph();
  if (process.argv.includes('--json')) {
    process.stdout.write(JSON.stringify({ files: g.files, edges: g.edges.map(({ files: _f, ...e }) => e), cycles: g.cycles, problems: g.problems }, null, 2) + '\n');
  } else {
    const w = Math.max(...g.edges.map((e) => e.from.length));
    process.stdout.write(`import graph of ${g.files} files (main/, preload/, renderer/src/), layer to layer, imports per edge:\n`);
    for (const e of g.edges) process.stdout.write(`  ${e.from.padEnd(w)} -> ${e.to}  ${e.count}${e.typeOnly ? ' (types only)' : ''}\n`);
    if (g.problems.length) {
      process.stdout.write(`\n${g.problems.length} problem(s):\n${g.problems.map((p) => `  ${p}`).join('\n')}\n`);
    } else process.stdout.write('\nno cycle, every edge points down and is allowed by scripts/layers.mjs\n');
  }
  process.exitCode = g.problems.length ? 1 : 0;
}
