#!/usr/bin/env node
// The `rpcgate` command: the compiled CLI (`npm run build` writes dist/; the packed package carries it), plain node.
// In a checkout without a build (after `npm install`), it runs the TypeScript sources through tsx (a dev dependency),
// so `npx rpcgate …` works there too.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
const sources = new URL('../src/cli/main.ts', import.meta.url);
let entry = main;
if (!existsSync(main)) {
  if (!existsSync(sources)) {
    console.error('rpcgate: neither dist/ nor src/ is here: reinstall the package.');
    process.exit(1);
  }
  try {
    const { register } = await import('tsx/esm/api');
    // The checkout's tsconfig maps @rpcgate/client and @rpcgate/toolkit to their sources, whatever the cwd.
    register({ tsconfig: fileURLToPath(new URL('../tsconfig.json', import.meta.url)) });
  } catch {
    console.error(
      'rpcgate: dist/ is not built and tsx is not installed. Run `npm install` (dev dependencies) or `npm run build`.',
    );
    process.exit(1);
  }
  entry = sources;
}
const { run } = await import(entry.href);
await run(process.argv);
