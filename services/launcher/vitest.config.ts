import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    globalSetup: ['@outbox-inbox/infra/vitest-global-setup'],
    testTimeout: 180_000,
    hookTimeout: 180_000,
    // One PostgreSQL + Kafka per run; the files share its topics, so they run one at a time.
    fileParallelism: false,
  },
});
