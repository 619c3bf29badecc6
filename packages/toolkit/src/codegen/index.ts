// The TypeScript client for ONE OpenRPC document, as files: what `rpcgate generate <document> --out <dir>` writes and
// what `npm run generate` (codegen/main.ts) writes into generated/<api>/ for the repository's own contracts.
//   types.ts       every schema and method: labelled params tuples, by-name params objects, results, JSDoc
//   methods.ts     the method descriptor as data (x- extensions kept)
//   validators.ts  ajv standalone validators behind allocation-free fast checks
//   client.ts      the typed client on `@rpcgate/client`
//   index.ts       re-exports (optional)
// The output imports only its own files and `@rpcgate/client`.
import type { ContractModel } from '../contract/model.js';
import { writeClient } from './client.js';
import { writeMethods } from './methods.js';
import { nameDocument } from './naming.js';
import { HEADER, jsdoc, tsHeader } from './schema.js';
import { writeTypes } from './types.js';
import { writeValidators } from './validators.js';
import { typeCheck } from './typecheck.js';

export { HEADER } from './schema.js';
export { nameDocument, type Naming } from './naming.js';
export { GenerateError } from './types.js';

export interface GenerateClientOptions {
  /** The command named in each file's header as the way to regenerate it (default `npm run generate`). */
  command?: string;
  /** Import specifier of the client in its JSDoc example (default `rpcgate/<name>`). */
  importPath?: string;
  /** Also write index.ts re-exporting client.ts and the validators (default true). */
  index?: boolean;
  /** Type-check the output in memory before returning it (default true; typecheck.ts): a document whose output would
   *  not compile is a GenerateError naming its pointer. Skipped, with `typeChecked: 'skipped'`, when the optional peer
   *  `typescript` is not installed. */
  typeCheck?: boolean;
}

/** What {@link generateClient} returns: the files, and whether they were type-checked. */
export type GeneratedFiles = Map<string, string> & { typeChecked?: 'ok' | 'skipped' | 'off' };

/** The generated files for one document: relative path → text. Deterministic: the same model gives the same bytes. */
export async function generateClient(model: ContractModel, opts: GenerateClientOptions = {}): Promise<GeneratedFiles> {
  const naming = nameDocument(model);
  const shared = { command: opts.command, naming };
  // One file at a time: each writer holds a large working set (ajv's compiled schemas, prettier's syntax trees) that
  // is garbage once its text is out; run together they add up (4,000 methods: about 1 GB, issue 26).
  // types first: a schema it cannot type is a GenerateError naming its pointer, before ajv fails on it less clearly.
  const types = await writeTypes(model, shared);
  const validators = writeValidators(model, shared);
  const methods = await writeMethods(model, shared);
  const client = await writeClient(model, { ...shared, importPath: opts.importPath });
  const files: GeneratedFiles = new Map<string, string>([
    ['types.ts', types],
    ['methods.ts', methods],
    ['validators.ts', validators],
    ['client.ts', client],
  ]);
  if (opts.index ?? true) {
    files.set(
      'index.ts',
      tsHeader(model.spec.file, opts) +
        jsdoc([
          `The ${model.spec.name} API (${model.title} ${model.version}): typed client, types, method descriptor and validators.`,
        ]) +
        `export * from './client.js';\nexport { validators, fastChecks } from './validators.js';\n`,
    );
  }
  files.typeChecked =
    opts.typeCheck === false
      ? 'off'
      : await typeCheck(files, {
          file: model.spec.file,
          pointerOf: (name) => naming.pointers.get(name),
        });
  return files;
}

/** Whether a file's text was written by the generator (its first line is the header). */
export const isGenerated = (text: string): boolean => text.startsWith(`// ${HEADER}`);
