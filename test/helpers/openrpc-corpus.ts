// The corpus of OpenRPC documents that no one here wrote, for the toolkit's tests. Issue 11: every document of the npm
// package @open-rpc/examples, the two documents of @metamask/api-specs, two documents vendored from npm packages
// (@open-rpc/mock-server's and @etclabscore/jade-service-runner's), the vendored Ethereum execution-apis spec assembled
// into one document as its own build does, and the repository's own two contracts. Issue 19: eleven documents that
// blockchain node projects publish (lotus, forest, celestia-node, starknet-specs, core-geth, flashbots, open-rpc/examples
// HEAD), 1 KB to 1.25 MB, OpenRPC 1.0.0-rc1 to 1.3.2, one in YAML, two split across files — vendored byte for byte in
// test/fixtures/openrpc-corpus with their licences and origins (README there). A document that is missing is an error
// naming it — never a silent skip.
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
  /** The issue that added it to the corpus: 11's documents are also run by older, narrower tests (generate.test.ts,
   *  python-client.test.ts, …); 19's end-to-end corpus test (toolkit-corpus*.test.ts) runs every document. */
  issue: 11 | 19;
  /** The working directory the document's refs are written against, when they are relative to a folder other than the
   *  referring file's (starknet-specs: `./api/x.json` from the repository root). Tools are run from there. */
  cwd?: string;
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

const VENDORED = join(ROOT, 'test/fixtures/openrpc-corpus');

/** The documents of issue 19, vendored from the repositories that publish them (see the README beside them). */
function published(): CorpusDocument[] {
  const at = (rel: string, name: string, origin: string, cwd?: string): CorpusDocument => ({
    name,
    file: must(join(VENDORED, rel), `vendored ${origin}`),
    origin,
    issue: 19,
    ...(cwd === undefined ? {} : { cwd: must(join(VENDORED, cwd), `vendored ${origin} folder`) }),
  });
  return [
    at('lotus/full.json', 'lotus-full', 'filecoin-project/lotus build/openrpc/full.json'),
    at('lotus/gateway.json', 'lotus-gateway', 'filecoin-project/lotus build/openrpc/gateway.json'),
    at('lotus/miner.json', 'lotus-miner', 'filecoin-project/lotus build/openrpc/miner.json'),
    at('forest/v1.json', 'forest-v1', 'ChainSafe/forest docs/openrpc-specs/v1.json'),
    at('celestia-node/openrpc.json', 'celestia-node', 'celestiaorg/celestia-node openrpc.json'),
    at(
      'starknet-specs/api/starknet_api_openrpc.json',
      'starknet-api',
      'starkware-libs/starknet-specs api/starknet_api_openrpc.json',
      'starknet-specs',
    ),
    at(
      'starknet-specs/api/starknet_trace_api_openrpc.json',
      'starknet-trace',
      'starkware-libs/starknet-specs api/starknet_trace_api_openrpc.json (refs into starknet_api_openrpc.json)',
      'starknet-specs',
    ),
    at(
      'starknet-specs/api/starknet_ws_api.json',
      'starknet-ws',
      'starkware-libs/starknet-specs api/starknet_ws_api.json (refs into starknet_api_openrpc.json)',
      'starknet-specs',
    ),
    at('flashbots/openrpc.yaml', 'flashbots', 'flashbots/api-specs openrpc.yaml (YAML)'),
    at('core-geth/openrpc.json', 'core-geth', 'etclabscore/core-geth openrpc.json'),
    at('open-rpc-examples/metrics-openrpc.json', 'examples-metrics', 'open-rpc/examples metrics-openrpc.json (HEAD)'),
  ];
}

/** Runs `fn` with the document's working directory (`doc.cwd`) as the process's, restoring it after. The corpus tests
 *  run documents one after another, so the change is never seen by another document's step. */
export async function inDocumentCwd<T>(doc: CorpusDocument, fn: () => Promise<T> | T): Promise<T> {
  if (!doc.cwd) return fn();
  const before = process.cwd();
  process.chdir(doc.cwd);
  try {
    return await fn();
  } finally {
    process.chdir(before);
  }
}

/** The documents of issue 11 (what the older corpus tests run over). */
export function corpus11(): CorpusDocument[] {
  return corpus().filter((d) => d.issue === 11);
}

/** Every corpus document (issue 11's and issue 19's). */
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
      issue: 11 as const,
    }));
  docs.push(
    {
      name: 'metamask',
      file: must(join(metamask, 'openrpc.json'), '@metamask/api-specs openrpc.json'),
      origin: '@metamask/api-specs',
      issue: 11,
    },
    {
      name: 'metamask-multichain',
      file: must(join(metamask, 'multichain-openrpc.json'), '@metamask/api-specs multichain-openrpc.json'),
      origin: '@metamask/api-specs',
      issue: 11,
    },
    {
      name: 'open-rpc-mock-server',
      file: must(
        join(ROOT, 'test/fixtures/openrpc-corpus/open-rpc-mock-server/service-mode-openrpc.json'),
        'vendored @open-rpc/mock-server document',
      ),
      origin: '@open-rpc/mock-server 1.7.8',
      issue: 11,
    },
    {
      name: 'jade-service-runner',
      file: must(
        join(ROOT, 'test/fixtures/openrpc-corpus/jade-service-runner/openrpc.json'),
        'vendored @etclabscore/jade-service-runner document',
      ),
      origin: '@etclabscore/jade-service-runner 1.10.5',
      issue: 11,
    },
    { name: 'execution-apis', file: executionApisDocument(), origin: 'ethereum/execution-apis (vendored)', issue: 11 },
    { name: 'rpcgate-node', file: join(ROOT, 'openrpc.json'), origin: 'this repository', issue: 11 },
    {
      name: 'rpcgate-account',
      file: join(ROOT, 'contracts/account.openrpc.json'),
      origin: 'this repository',
      issue: 11,
    },
    ...published(),
  );
  if (docs.filter((d) => d.origin === '@open-rpc/examples').length < 6)
    throw new Error('corpus: @open-rpc/examples lists fewer than its 6 documents');
  if (docs.length < 24) throw new Error(`corpus: ${docs.length} documents, expected 24`);
  return docs;
}
