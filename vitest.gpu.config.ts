import { defineConfig } from 'vitest/config';

// The GPU suite: needs a real NVIDIA GPU (run with `npm run test:gpu`, or the bundled
// `kernelduel-gpu/test-gpu` on a server without Node tooling).
export default defineConfig({
  test: {
    include: ['test/gpu/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
  },
});
