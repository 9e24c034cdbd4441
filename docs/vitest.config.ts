import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // One PostgreSQL + Kafka for the run; the workshop test adds both services to it.
    globalSetup: ['@outbox-inbox/infra/vitest-global-setup'],
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 180_000,
  },
});
