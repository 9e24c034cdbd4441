import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    globalSetup: ['./src/testing/vitest-global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // The tests share machines with two cores; servers are started per test file here.
    fileParallelism: false,
  },
});
