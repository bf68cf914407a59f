import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real servers and SQLite files; two workers match the CI machine's two cores.
    maxWorkers: 2,
    // expect.poll waits for what a person would wait for (a sync, a pushed status): vitest's default of 1 s failed
    // the window's first test once in 4 full runs on the loaded two cores; 15 s costs nothing when it passes.
    expect: { poll: { timeout: 15_000 } },
  },
});
