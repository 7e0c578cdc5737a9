// Builds the three parts of the desktop app: the main process (main/doors/electron/index.ts and the
// engine), the sandboxed preload (CommonJS: sandboxed preloads cannot be ES modules) and the
// renderer (React + Monaco, bundled locally; also served by `kernelduel serve` in browser mode).
import { resolve } from 'node:path';
import { defineConfig } from 'electron-vite';

export default defineConfig({
  main: {
    build: {
      outDir: 'out/main',
      // The optimisation worker is an entry of its own, so that its file exists (out/main/worker.js) for
      // `new Worker()`; the engine shared with index.js goes into a chunk both import.
      rollupOptions: { input: { index: resolve('main/doors/electron/index.ts'), worker: resolve('main/core/run/worker.ts') } },
    },
  },
  preload: {
    build: {
      outDir: 'out/preload',
      // Everything inlined: a sandboxed preload can only require 'electron'.
      externalizeDeps: false,
      rollupOptions: {
        input: { index: resolve('preload/index.ts') },
        external: ['electron'],
        output: { format: 'cjs', entryFileNames: '[name].cjs' },
      },
    },
  },
  renderer: {
    root: resolve('renderer'),
    base: './',
    esbuild: { jsx: 'automatic' },
    build: {
      outDir: resolve('out/renderer'),
      emptyOutDir: true,
      chunkSizeWarningLimit: 8000,
      rollupOptions: { input: { index: resolve('renderer/index.html') } },
    },
    worker: { format: 'es' },
  },
});
