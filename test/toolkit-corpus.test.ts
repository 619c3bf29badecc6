// Issue 11 item 7: the toolkit over a corpus that no one here wrote (test/helpers/openrpc-corpus.ts: @open-rpc/examples,
// @metamask/api-specs, two documents vendored from npm packages, the vendored execution-apis spec; plus the repository's
// own contracts). For each document: its docs are written (a page per method, every relative link resolves, Try it data
// and browser validators embedded), its mock starts, conformance of the mock against its own document passes, and
// conformance of the mock against a different document fails.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMock, loadDocument, methodFiles, specConformance, writeDocs, type MockServer } from '@rpcgate/toolkit';
import { corpus, type CorpusDocument } from './helpers/openrpc-corpus.js';

const docs = corpus();

describe.each(docs.map((d, i) => [d.name, d, docs[(i + 1) % docs.length]] as const))(
  '%s',
  (_name, doc: CorpusDocument, other: CorpusDocument) => {
    let mock: MockServer;
    let url: string;
    beforeAll(async () => {
      mock = await createMock({ document: doc.file, seed: 1 });
      url = await mock.listen(0, '127.0.0.1');
    });
    afterAll(() => mock?.close());

    it('docs are written: a page per method, every relative link resolves', async () => {
      const model = await loadDocument(doc.file, doc.name);
      const files = writeDocs(model);
      const pages = methodFiles(model);
      expect(pages.size).toBe(model.methods.length);
      for (const file of pages.values()) expect(files.has(file), file).toBe(true);
      let links = 0;
      for (const [file, html] of files) {
        if (!file.endsWith('.html')) continue;
        for (const [, href] of html.matchAll(/(?:href|src)="([^"#:?]+)(?:#[^"]*)?"/g)) {
          const target = new URL(href, `file:///x/${file}`).pathname.slice('/x/'.length);
          expect(files.has(target), `${file} → ${href}`).toBe(true);
          links++;
        }
      }
      expect(links).toBeGreaterThan(model.methods.length);
    });

    it(`the mock passes conformance against its own document (${doc.origin})`, async () => {
      const report = await specConformance(url, doc.file, { timeoutMs: 10_000 });
      const failed = [...report.methods, ...report.protocol].filter((r) => r.status === 'FAIL');
      expect(failed.map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
      expect(report.ok).toBe(true);
      expect(report.summary.passed).toBeGreaterThanOrEqual(mock.model.methods.length);
    });

    it(`the mock fails conformance against another document (${other.name})`, async () => {
      const report = await specConformance(url, other.file, { timeoutMs: 10_000 });
      expect(report.ok).toBe(false);
      expect(report.summary.failed).toBeGreaterThan(0);
    });
  },
);
