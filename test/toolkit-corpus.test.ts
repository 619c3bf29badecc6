// Issues 11 and 19: the toolkit over a corpus that no one here wrote (test/helpers/openrpc-corpus.ts: @open-rpc/examples,
// @metamask/api-specs, the vendored execution-apis spec, documents vendored from npm packages and from the repositories
// of blockchain node projects — up to 1.25 MB / 276 methods, one YAML, two split across files — plus the repository's
// own contracts). For EVERY document, one after another (a split document is loaded from its own working directory):
// - it loads;
// - its docs are written: a page per method, every relative link, anchor and script resolves inside the output, nothing
//   is loaded from elsewhere (no src with a scheme), and every embedded JSON script parses;
// - its mock starts, conformance of the mock against its own document passes, and conformance of the mock against a
//   different document (the next one in the list that has a method this one lacks) fails;
// - createServer with ONE handler serves it over HTTP: the client runtime calls that method (test/helpers/corpus-call.ts
//   chooses it and its params) and gets the handler's answer, the handler receives the params positionally — by name,
//   as an object, for a by-name method — and another method answers -32601.
// generate → tsc (NodeNext and Bundler) runs in toolkit-corpus-compile.test.ts, beside this file on the other core.
import { afterAll, describe, expect, it } from 'vitest';
import { createTypedClient, RpcClientError } from '@rpcgate/client';
import { compileContract, type CompiledContract } from '../packages/toolkit/src/contract/compile.js';
import { loadDocument, type ContractModel } from '../packages/toolkit/src/contract/model.js';
import { methodFiles, writeDocs } from '../packages/toolkit/src/docs/index.js';
import { createMock } from '../packages/toolkit/src/mock/index.js';
import { specConformance } from '../packages/toolkit/src/conformance/spec.js';
import { createServer } from '../packages/toolkit/src/server/index.js';
import { chooseCall } from './helpers/corpus-call.js';
import { corpus, inDocumentCwd, type CorpusDocument } from './helpers/openrpc-corpus.js';

const docs = corpus();

/** Models loaded once per document (the conformance check against another document reuses them). */
const models = new Map<string, Promise<ContractModel>>();
const model = (d: CorpusDocument) => {
  if (!models.has(d.name))
    models.set(
      d.name,
      inDocumentCwd(d, () => loadDocument(d.file, d.name)),
    );
  return models.get(d.name)!;
};
const loaded = async (d: CorpusDocument) =>
  model(d).then(
    (m) => m,
    () => undefined,
  );

/** What is wrong with the written docs: relative links, anchors and scripts that name nothing in the output, sources
 *  loaded from elsewhere, embedded JSON that does not parse. (test/docs.test.ts checks the same on disk.) */
function brokenDocs(files: Map<string, string>): string[] {
  const ids = new Map<string, Set<string>>();
  const idsOf = (file: string) => {
    if (!ids.has(file)) ids.set(file, new Set([...files.get(file)!.matchAll(/\sid="([^"]+)"/g)].map((m) => m[1])));
    return ids.get(file)!;
  };
  const broken: string[] = [];
  for (const [page, html] of files) {
    if (!page.endsWith('.html')) continue;
    for (const [, attr, link] of html.matchAll(/\s(href|src)="([^"]*)"/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) {
        // a link out (a description's URL, externalDocs) is the reader's choice; a source is loaded by the page
        if (attr === 'src' || !/^(https?|mailto):/i.test(link)) broken.push(`${page}: ${attr} not relative: ${link}`);
        continue;
      }
      const [file, frag] = link.split('#');
      const target = file ? new URL(decodeURIComponent(file), `file:///x/${page}`).pathname.slice('/x/'.length) : page;
      if (!files.has(target)) broken.push(`${page}: ${link} (no such file)`);
      else if (frag && target.endsWith('.html') && !idsOf(target).has(decodeURIComponent(frag)))
        broken.push(`${page}: ${link} (no such anchor)`);
    }
    for (const [, id, json] of html.matchAll(/<script type="application\/json"(?: id="([^"]*)")?>([^<]*)<\/script>/g)) {
      try {
        JSON.parse(json);
      } catch (e) {
        broken.push(`${page}: script ${id ?? ''} is not JSON (${(e as Error).message})`);
      }
    }
  }
  return broken;
}

afterAll(() => models.clear());

describe.each(docs.map((d, i) => [d.name, d, i] as const))('%s', (_name, doc, index) => {
  it(`loads (${doc.origin})`, async () => {
    const m = await model(doc);
    expect(m.methods.length).toBeGreaterThan(0);
  });

  it('docs are written: a page per method, every link, anchor and script resolves inside the output', async () => {
    const m = await model(doc);
    const files = writeDocs(m);
    const pages = methodFiles(m);
    expect(pages.size).toBe(m.methods.length);
    for (const file of pages.values()) expect(files.has(file), file).toBe(true);
    for (const f of ['index.html', 'assets/try-it.js', 'assets/validators.js']) expect(files.has(f), f).toBe(true);
    const scripts = [...files.values()].flatMap((html) => [...html.matchAll(/<script[^>]*\ssrc="([^"]+)"/g)]);
    expect(scripts.length).toBeGreaterThanOrEqual(m.methods.length);
    expect(brokenDocs(files)).toEqual([]);
  });

  it('its mock passes conformance against its own document and fails against another one', async () => {
    const m = await model(doc);
    const mock = await createMock({ document: m, seed: 1 });
    try {
      const url = await mock.listen(0, '127.0.0.1');
      const own = await specConformance(url, m, { timeoutMs: 10_000 });
      const failed = [...own.methods, ...own.protocol].filter((r) => r.status === 'FAIL');
      expect(failed.map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
      expect(own.ok).toBe(true);
      expect(own.summary.passed).toBeGreaterThanOrEqual(m.methods.length);

      // the next document (in list order) that loads and has a method this one lacks: its conformance must fail
      const names = new Set(m.methods.map((x) => x.name));
      let other: ContractModel | undefined;
      for (let k = 1; k < docs.length && !other; k++) {
        const o = await loaded(docs[(index + k) % docs.length]);
        if (o?.methods.some((x) => !names.has(x.name))) other = o;
      }
      expect(other, 'another document with a method this one lacks').toBeDefined();
      const report = await specConformance(url, other!, { timeoutMs: 10_000 });
      expect(report.ok, `against ${other!.spec.name}`).toBe(false);
      expect(report.summary.failed).toBeGreaterThan(0);
    } finally {
      await mock.close();
    }
  }, 120_000);

  it('createServer with one handler answers its call over HTTP; the other methods answer -32601', async () => {
    const contract: CompiledContract = compileContract(await model(doc));
    const call = chooseCall(contract);
    const received: unknown[] = [];
    const errors: unknown[] = [];
    const server = await createServer({
      document: contract.model,
      handlers: {
        [call.method]: (params: unknown) => {
          received.push(params);
          return (call.result?.value ?? null) as never;
        },
      },
      onError: (err) => errors.push(err),
    });
    try {
      const url = await server.listen(0, '127.0.0.1');
      const client = createTypedClient(server.contract.methods, { url });
      const answer = await client.request(call.method as never, call.params as never);
      if (call.result) expect(answer).toEqual(call.result.value);
      expect(received).toEqual([call.paramStructure === 'by-name' ? call.named : call.params]);
      expect(errors).toEqual([]);

      const other = contract.model.methods.find((x) => x.name !== call.method && x.name !== 'rpc.discover');
      if (other) {
        const refused = await client.request(other.name as never, [] as never).then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(refused).toBeInstanceOf(RpcClientError);
        expect((refused as RpcClientError).code, other.name).toBe(-32601);
      }
    } finally {
      await server.close();
    }
  });
});
