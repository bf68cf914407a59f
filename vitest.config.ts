import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and SQLite files; two workers match the CI machine's two cores.
    maxWorkers: 2,
  },
});
