import { defineConfig } from 'vitest/config';

// Workshop exercise 5 adds Kafka Connect to the stack, which the local provider alone runs
// (as the e2e suite's stacks do): the global setup below reads this when it creates the stack.
process.env['STACK_PROVIDER'] ??= 'local';

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
