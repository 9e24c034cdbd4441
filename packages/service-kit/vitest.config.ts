import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'src/**/*.test.ts'],
    // Real Kafka (and PostgreSQL) for the topic provisioning tests.
    globalSetup: ['@outbox-inbox/infra/vitest-global-setup'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
