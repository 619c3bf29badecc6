// `rpcgate docs <document> --out <dir>`: the static HTML API reference of any OpenRPC document (a path or an http(s)
// URL): overview, one page per method with a Try it panel, schemas, servers (packages/toolkit/src/docs/). Opens from disk.
// Exit code: 0 written, 1 the document could not be read, validated or written (one line on stderr).
import path from 'node:path';
import { Command } from 'commander';
import { loadDocument } from '../contract/model.js';
import { writeDocsTo } from '../docs/index.js';
import { errorLine } from './output.js';
import {
  documentLimits,
  loadOptions,
  printWarnings,
  withDocumentLimits,
  type DocumentLimitFlags,
} from './document-limits.js';

export interface DocsCliOptions extends DocumentLimitFlags {
  out: string;
}

/** Writes the reference; returns the process exit code. */
export async function docsAction(
  document: string,
  cli: DocsCliOptions,
  out: (s: string) => void = (s) => process.stdout.write(`${s}\n`),
  err: (s: string) => void = (s) => process.stderr.write(`${s}\n`),
): Promise<number> {
  const dir = path.resolve(cli.out);
  try {
    const model = await loadDocument(document, undefined, documentLimits(cli), loadOptions(cli));
    printWarnings(model.warnings, err);
    const files = await writeDocsTo(dir, model);
    const pages = files.filter((f) => f.endsWith('.html'));
    out(
      `${model.title} ${model.version}: ${model.methods.length} method page(s), ${pages.length} pages and ${files.length - pages.length} assets written to ${dir}`,
    );
    out(`open ${path.join(dir, 'index.html')}`);
    return 0;
  } catch (e) {
    err(`rpcgate docs: ${errorLine(e)}`);
    return 1;
  }
}

export function docsCommand(): Command {
  return withDocumentLimits(
    new Command('docs')
      .description(
        'write the static HTML API reference of any OpenRPC document (methods, schemas, servers, a Try it panel per method)',
      )
      .argument('<document>', 'OpenRPC document: a file path or an http(s) URL')
      .requiredOption('-o, --out <dir>', 'folder to write into (created)')
      .action(async (document: string, cli: DocsCliOptions) => {
        process.exitCode = await docsAction(document, cli);
      }),
  );
}

export function register(program: Command): Command {
  return program.addCommand(docsCommand());
}

export default docsCommand;
