#!/usr/bin/env node
// The toolkit's command (`npx @rpcgate/toolkit generate|docs|mock|conformance …`): the compiled CLI, plain node.
import { run } from '../dist/cli/index.js';

await run(process.argv);
