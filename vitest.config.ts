import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The workspaces' and the root package's exports ('@rpcgate/client', '@rpcgate/toolkit/…', 'rpcgate/node', …) resolve to
  // the sources (tsconfig.json "paths").
  resolve: { tsconfigPaths: true },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Tests start anvil and servers on free ports; files run in parallel on the two cores.
    pool: 'forks',
  },
});
