// The corpus of OpenRPC documents that no one here wrote, for the toolkit's tests (issue 11): every document of the npm
// package @open-rpc/examples, the two documents of @metamask/api-specs, two documents vendored from npm packages
// (test/fixtures/openrpc-corpus: @open-rpc/mock-server's and @etclabscore/jade-service-runner's, Apache-2.0, see the
// README there), the vendored Ethereum execution-apis spec assembled into one document as its own build does, and the
// repository's own two contracts. A document that is missing is an error naming it — never a silent skip.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { EXECUTION_APIS_DIR } from './execution-apis.js';

const ROOT = resolve(import.meta.dirname, '../..');

export interface CorpusDocument {
  /** Short unique name (file-system safe). */
  name: string;
  /** Absolute path of the JSON document. */
  file: string;
  /** Where it comes from. */
  origin: string;
}

function must(file: string, what: string): string {
  if (!existsSync(file))
    throw new Error(`corpus document missing: ${what} (${file}) — run npm install / restore the vendored fixture`);
  return file;
}

/** The execution-apis spec as one OpenRPC document: methods of test/fixtures/execution-apis/src/eth/*.yaml, schemas of
 *  test/fixtures/execution-apis/src/schemas/*.yaml, error
 *  groups flattened into each method's errors (what the spec's own build script does). Written once to a temp file. */
let executionApisFile: string | undefined;
export function executionApisDocument(): string {
  if (executionApisFile) return executionApisFile;
  const src = join(must(EXECUTION_APIS_DIR, 'vendored execution-apis'), 'src');
  const yamlFiles = (dir: string) =>
    readdirSync(join(src, dir))
      .filter((f) => f.endsWith('.yaml'))
      .sort()
      .map((f) => parseYaml(readFileSync(join(src, dir, f), 'utf8')));
  const groups: Record<string, { errors: unknown[] }> = Object.assign({}, ...yamlFiles('error-groups'));
  const groupErrors = (refs: { $ref?: string }[]) =>
    refs.flatMap((e) => {
      const g = e.$ref?.match(/^#\/components\/error-groups\/(.+)$/)?.[1];
      if (g === undefined) return [e];
      if (!groups[g]) throw new Error(`execution-apis: unknown error group ${g}`);
      return groups[g].errors;
    });
  const methods = yamlFiles('eth')
    .flat()
    .map(({ 'error-groups': refs, ...m }: Record<string, unknown>) =>
      Array.isArray(refs) ? { ...m, errors: [...((m.errors as unknown[]) ?? []), ...groupErrors(refs)] } : m,
    );
  const doc = {
    openrpc: '1.2.4',
    info: {
      title: 'Ethereum JSON-RPC Specification (execution-apis, eth namespace)',
      version: '0.0.0',
      license: { name: 'CC0-1.0' },
    },
    methods,
    components: { schemas: Object.assign({}, ...yamlFiles('schemas')) },
  };
  const dir = mkdtempSync(join(tmpdir(), 'rpcgate-corpus-'));
  executionApisFile = join(dir, 'execution-apis.openrpc.json');
  writeFileSync(executionApisFile, JSON.stringify(doc, null, 2));
  return executionApisFile;
}

/** Every corpus document. */
export function corpus(): CorpusDocument[] {
  const examples = must(
    join(ROOT, 'node_modules/@open-rpc/examples/build/service-descriptions'),
    'npm package @open-rpc/examples',
  );
  const metamask = must(join(ROOT, 'node_modules/@metamask/api-specs/dist/build'), 'npm package @metamask/api-specs');
  const docs: CorpusDocument[] = readdirSync(examples)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => ({
      name: `examples-${f.replace(/-openrpc\.json$|\.json$/, '')}`,
      file: join(examples, f),
      origin: '@open-rpc/examples',
    }));
  docs.push(
    {
      name: 'metamask',
      file: must(join(metamask, 'openrpc.json'), '@metamask/api-specs openrpc.json'),
      origin: '@metamask/api-specs',
    },
    {
      name: 'metamask-multichain',
      file: must(join(metamask, 'multichain-openrpc.json'), '@metamask/api-specs multichain-openrpc.json'),
      origin: '@metamask/api-specs',
    },
    {
      name: 'open-rpc-mock-server',
      file: must(
        join(ROOT, 'test/fixtures/openrpc-corpus/open-rpc-mock-server/service-mode-openrpc.json'),
        'vendored @open-rpc/mock-server document',
      ),
      origin: '@open-rpc/mock-server 1.7.8',
    },
    {
      name: 'jade-service-runner',
      file: must(
        join(ROOT, 'test/fixtures/openrpc-corpus/jade-service-runner/openrpc.json'),
        'vendored @etclabscore/jade-service-runner document',
      ),
      origin: '@etclabscore/jade-service-runner 1.10.5',
    },
    { name: 'execution-apis', file: executionApisDocument(), origin: 'ethereum/execution-apis (vendored)' },
    { name: 'rpcgate-node', file: join(ROOT, 'openrpc.json'), origin: 'this repository' },
    { name: 'rpcgate-account', file: join(ROOT, 'contracts/account.openrpc.json'), origin: 'this repository' },
  );
  if (docs.filter((d) => d.origin === '@open-rpc/examples').length < 6)
    throw new Error('corpus: @open-rpc/examples lists fewer than its 6 documents');
  return docs;
}
