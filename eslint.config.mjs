// ESLint (flat config): typescript-eslint's recommended rules (syntax only, no type information:
// fast on two cores; `tsc` already checks the types), and the architecture: every layer of
// scripts/layers.mjs is an element of eslint-plugin-boundaries, which may import only what the
// layer table allows (docs/ARCHITECTURE.md). The same table drives scripts/import-graph.mjs.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import boundaries from 'eslint-plugin-boundaries';
import reactHooks from 'eslint-plugin-react-hooks';
import { LAYERS } from './scripts/layers.mjs';

/** One boundaries policy per layer: what it may import (values and types), what only as types, and which files only. */
function policies() {
  const out = [];
  for (const l of LAYERS) {
    const from = { element: { type: l.name } };
    const targets = [l.name, ...l.allow].map((name) => {
      const only = l.only?.[name];
      if (!only) return { element: { type: name } };
      const base = LAYERS.find((x) => x.name === name).path;
      return { element: { type: name, fileInternalPath: only.map((f) => f.slice(base.length + 1)) } };
    });
    out.push({ from, allow: { to: targets } });
    if (l.typesFrom?.length) out.push({ from, allow: { to: { element: { types: { anyOf: l.typesFrom } } }, dependency: { kind: 'type' } } });
  }
  return out;
}

export default tseslint.config(
  { ignores: ['out/**', 'dist/**', 'dist-gpu/**', 'node_modules/**', 'bench/results/**', 'bench/spaces/**', 'resources/**', 'docs/**', 'test-artifacts/**', 'device-out/**', '.kd-*/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', setImmediate: 'readonly', structuredClone: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', TextEncoder: 'readonly', TextDecoder: 'readonly', fetch: 'readonly', NodeJS: 'readonly' },
    },
    rules: {
      // `_name` marks a deliberately unused binding (a destructured field left out, a callback argument).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    files: ['renderer/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks },
    rules: { 'react-hooks/rules-of-hooks': 'error', 'react-hooks/exhaustive-deps': 'error' },
    languageOptions: { globals: { window: 'readonly', document: 'readonly', location: 'readonly', WebSocket: 'readonly', Blob: 'readonly', HTMLElement: 'readonly', localStorage: 'readonly', navigator: 'readonly', self: 'readonly' } },
  },
  {
    files: ['main/**/*.ts', 'preload/**/*.ts', 'renderer/**/*.{ts,tsx}'],
    plugins: { boundaries },
    settings: {
      'import/resolver': { typescript: { project: 'tsconfig.json' } },
      'boundaries/elements': LAYERS.map((l) => ({ type: l.name, pattern: l.path, partialMatch: false })),
    },
    rules: {
      'boundaries/dependencies': ['error', { default: 'disallow', policies: policies() }],
      // Every file of main/, preload/ and renderer/ belongs to a layer.
      'boundaries/no-unknown-files': 'error',
    },
  },
);
