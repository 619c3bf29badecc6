#!/usr/bin/env node
// The `rpcgate` command: the compiled CLI (`npm run build` writes dist/; the packed package carries it), plain node.
// From a clone without a build, `npx tsx src/cli/main.ts …` runs the sources (what `npm start` does).
import { existsSync } from 'node:fs';

const main = new URL('../dist/src/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  console.error('rpcgate: dist/ is not built. Run `npm run build` (or `npx tsx src/cli/main.ts …` to run the sources).');
  process.exit(1);
}
const { run } = await import(main.href);
await run(process.argv);
