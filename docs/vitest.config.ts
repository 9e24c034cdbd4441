import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // The workshop test starts its own stack and both services: one file at a time.
    fileParallelism: false,
    testTimeout: 240_000,
    hookTimeout: 180_000,
  },
});
