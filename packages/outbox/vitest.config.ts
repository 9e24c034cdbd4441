import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    globalSetup: ['@outbox-inbox/infra/vitest-global-setup'],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    // One PostgreSQL + Kafka for the run, on a 2-core machine: files run one after another.
    fileParallelism: false,
    env: { KAFKAJS_NO_PARTITIONER_WARNING: '1' },
  },
});
