// generated/<api>/client.ts: binds the generic runtime (packages/client, imported as the package
// `@rpcgate/client` so the generated code runs unchanged from the installed package) to this contract's `methods`.
import { exampleParams, type ContractModel, type Json } from '../contract/model.js';
import { clientImport, js, RUNTIME_IMPORT } from './schema.js';
import { jsdoc, tsHeader, type HeaderOptions } from './schema.js';
import { formatTs } from './types.js';
import { nameDocument, type Naming } from './naming.js';

export interface ClientWriterOptions extends HeaderOptions {
  naming?: Naming;
  /** Import specifier of this client in the JSDoc example (default: the package export `rpcgate/<name>`). */
  importPath?: string;
}

export async function writeClient(c: ContractModel, opts: ClientWriterOptions = {}): Promise<string> {
  const { api } = opts.naming ?? nameDocument(c);
  // The JSDoc example calls a method whose first example is complete (real documents have examples lacking a param).
  const complete = (m: (typeof c.methods)[number]): Json[] | undefined => {
    try {
      return exampleParams(m);
    } catch {
      return undefined;
    }
  };
  const sample =
    c.methods.find((m) => m.params.length > 0 && m.examples.length > 0 && complete(m)) ??
    c.methods.find((m) => !m.params.some((p) => p.required));
  const sampleParams = sample ? js(complete(sample) ?? []) : '[]';
  const noParams = c.methods.find((m) => m.params.length === 0 && !m.name.startsWith('rpc.'));
  const url = c.servers[0]?.url ?? 'http://127.0.0.1:8545/';
  const out = [
    tsHeader(c.spec.file, opts),
    `import { createTypedClient, type Client, type ClientOptions } from '${RUNTIME_IMPORT}';\n`,
    `import { methods, type Methods } from './methods.js';\n\n`,
    `export { RpcClientError, type BatchCall, type BatchResult, type Client, type ClientOptions, type ParamsArg } from '${RUNTIME_IMPORT}';\n`,
    `export { contract, methods, type Methods, type MethodName } from './methods.js';\n`,
    `export type * from './types.js';\n\n`,
    jsdoc([
      `A typed client of the ${c.spec.name} API (${c.title} ${c.version}): \`request\` and \`batch\` are typed by method name.`,
    ]),
    `export type ${api}Client = Client<Methods>;\n\n`,
    jsdoc([
      `Creates a client of the ${c.spec.name} API.`,
      '',
      `\`options.url\` is the full endpoint, API key included (server template \`${url}\`).`,
      'Errors answered by the server are thrown as `RpcClientError` (`code`, `message`, `data`).',
      '',
      '@example',
      '```ts',
      `import { createClient } from '${opts.importPath ?? clientImport(c)}';`,
      '',
      `const client = createClient({ url: process.env.RPC_URL! });`,
      ...(noParams ? [`const value = await client.request(${js(noParams.name)});`] : []),
      ...(sample ? [`const result = await client.request(${js(sample.name)}, ${sampleParams});`] : []),
      '```',
    ]),
    `export function createClient(options: ClientOptions): ${api}Client {\n  return createTypedClient(methods, options);\n}\n`,
  ];
  return formatTs(out.join(''));
}
