import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'suite/**/*.test.ts'],
    globalSetup: ['./src/report-global-setup.ts', './src/shared-servers-global-setup.ts'],
    // One scenario at a time: each runs eleven service processes, on the shared servers or its own.
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
