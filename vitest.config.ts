import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/gpu/**', 'node_modules/**'],
    // Builds the CLI once for the tests that run it as a child process (see the file).
    globalSetup: ['test/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
    // expect.poll waits for something that will happen (a view to update, a run to finish); its
    // default of 1 s failed the browser tests under CI's load (2 cores, two test files at once).
    // A test that bounds a delay gives its own, shorter timeout.
    expect: { poll: { timeout: 10_000 } },
    // The workbench is built (when its sources changed) only by the tests that drive it: test/e2e/.
  },
});
