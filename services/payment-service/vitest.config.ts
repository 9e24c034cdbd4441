import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    globalSetup: ['@outbox-inbox/infra/vitest-global-setup'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // One PostgreSQL + Kafka per run, shared by the files; some files kill a server.
    fileParallelism: false,
  },
});
