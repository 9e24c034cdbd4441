import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts', 'suite/**/*.test.ts'],
    globalSetup: ['./src/report-global-setup.ts'],
    // Each scenario starts its own PostgreSQL, Kafka and eleven service processes: one at a time.
    fileParallelism: false,
    testTimeout: 600_000,
    hookTimeout: 180_000,
    reporters: ['default'],
  },
});
