import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A PostgreSQL and a Kafka of its own for the run (@outbox-inbox/infra).
    globalSetup: ['@outbox-inbox/infra/vitest-global-setup'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
  },
});
