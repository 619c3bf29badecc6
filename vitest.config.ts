import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Tests start anvil and servers on free ports; files run in parallel on the two cores.
    pool: 'forks',
  },
});
