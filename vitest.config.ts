import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Integration tests start real servers and SQLite files; two workers match the CI machine's two cores.
    maxWorkers: 2,
  },
});
