// `rpcgate mock <document> [--port <n>] [--host <h>] [--seed <n>]`: a validating JSON-RPC 2.0 mock of any OpenRPC
// document (packages/toolkit/src/mock): prints one line with its URL on stdout and what it cannot serve as the document says on
// stderr, serves until SIGTERM/SIGINT, then closes and exits 0. A document that cannot be loaded: one line, exit 1.
import { stopWhenNpmParentExits } from './lifecycle.js';
import { Command, InvalidArgumentError } from 'commander';
import { createMock, type MockServer } from '../mock/index.js';
import { errorLine } from './output.js';
import {
  documentLimits,
  loadOptions,
  printWarnings,
  withDocumentLimits,
  type DocumentLimitFlags,
} from './document-limits.js';
import { loadDocument } from '../contract/model.js';

const port = (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v) || n > 65535) throw new InvalidArgumentError('must be a port number (0 = any free port)');
  return n;
};
const integer = (v: string) => {
  const n = Number(v);
  if (!Number.isSafeInteger(n)) throw new InvalidArgumentError('must be an integer');
  return n;
};

/** An error as one line (schema validation messages span several). */

interface MockFlags extends DocumentLimitFlags {
  port: number;
  host: string;
  seed: number;
}

export function mockCommand(): Command {
  return withDocumentLimits(
    new Command('mock')
      .description(
        'serve a mock of any OpenRPC document: params validated, answers from its examples or generated from its result schemas',
      )
      .argument('<document>', 'OpenRPC document: a file path or an http(s) URL')
      .option('-p, --port <n>', 'listen port (0 = any free port; 3333 as @open-rpc/mock-server)', port, 3333)
      .option('--host <h>', 'listen address', '127.0.0.1')
      .option('--seed <n>', 'seed of the generated values (same seed, same answers)', integer, 1)
      .action(async (document: string, flags: MockFlags) => {
        let mock: MockServer;
        let url: string;
        try {
          // Loaded here so the load flags apply and the document's warnings are printed first.
          const model = await loadDocument(document, undefined, documentLimits(flags), loadOptions(flags));
          printWarnings(model.warnings, (s) => process.stderr.write(`${s}\n`));
          mock = await createMock({
            document: model,
            seed: flags.seed,
            limits: documentLimits(flags),
            onError: (err, method) => process.stderr.write(`rpcgate mock: ${method}: ${errorLine(err)}\n`),
          });
          url = await mock.listen(flags.port, flags.host);
        } catch (e) {
          process.stderr.write(`rpcgate mock: ${errorLine(e)}\n`);
          process.exit(1);
        }
        for (const w of mock.warnings) process.stderr.write(`warning: ${w}\n`);
        const n = mock.model.methods.length;
        process.stdout.write(
          `mock of ${JSON.stringify(mock.model.title)} ${mock.model.version}: ${n} method${n === 1 ? '' : 's'} at ${url}\n`,
        );
        const stop = () => {
          // a second signal while closing, or a close that hangs, still ends the process
          setTimeout(() => process.exit(0), 3000).unref();
          void mock.close().then(() => process.exit(0));
        };
        process.once('SIGTERM', stop);
        process.once('SIGINT', stop);
        stopWhenNpmParentExits(stop);
      }),
  );
}

export function register(program: Command): Command {
  return program.addCommand(mockCommand());
}

export default mockCommand;
