import { defineConfig } from 'vitest/config';

// Unit tests of the bench's own arithmetic: no servers (the scenarios themselves run under `pnpm bench`).
export default defineConfig({
  test: {
    include: ['src/**/*.test.ts'],
  },
});
