// The HTML API reference of any OpenRPC document (packages/toolkit/src/docs/, `rpcgate docs`):
// - over a corpus no one here wrote (every @open-rpc/examples document, MetaMask's API spec) and the repository's two
//   contracts: written, deterministic, one page per method, every relative link and anchor resolves on disk, and the
//   browser validators (assets/validators.js, compiled at generate time) agree with the run-time ajv validators;
// - the CLI: writes a folder and says so; a bad document is one line on stderr and exit 1;
// - in a real browser (playwright-core driving Debian's /usr/bin/chromium): method pages opened from file:// call a
//   mock of the same document (createMock, as `rpcgate mock` serves it), the answer is shown and
//   "valid"; a server answering the wrong shape gets "invalid: <path> <message>"; nothing is loaded from the network.
import { execFile } from 'node:child_process';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import vm from 'node:vm';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compileValidators } from '../packages/toolkit/src/contract/compile.js';
import { loadDocument, modelDocument, type ContractModel, type Json } from '../packages/toolkit/src/contract/model.js';
import { sampleResult } from '../packages/toolkit/src/contract/sample.js';
import { methodFiles, writeDocs, writeDocsTo } from '../packages/toolkit/src/docs/index.js';
import { createServer, type RpcServer } from '../packages/toolkit/src/server/index.js';
import { createMock } from '../packages/toolkit/src/mock/index.js';
import type { Handler } from '../packages/toolkit/src/rpc/engine.js';
import { docsAction } from '../packages/toolkit/src/cli/docs.js';
import { startService, type RunningService } from '../src/gateway/server/index.js';

const exec = promisify(execFile);
const root = resolve(import.meta.dirname, '..');
const EXAMPLES = join(root, 'node_modules/@open-rpc/examples/build/service-descriptions');
const CORPUS = [
  ...readdirSync(EXAMPLES)
    .filter((f) => f.endsWith('.json'))
    .sort()
    .map((f) => join(EXAMPLES, f)),
  join(root, 'node_modules/@metamask/api-specs/dist/build/openrpc.json'),
  join(root, 'openrpc.json'),
  join(root, 'contracts/account.openrpc.json'),
];

const CHROMIUM = '/usr/bin/chromium';
// A fresh machine may lack Debian's chromium (`apt-get install chromium`; .ci/run installs it): the browser test then
// says so and skips — under CI it must run.
const skipBrowser = !existsSync(CHROMIUM) && !process.env.CI;
if (skipBrowser)
  console.warn(
    `[docs] ${CHROMIUM} not found: Try it browser test SKIPPED (apt-get install chromium; required when CI is set)`,
  );
const SHOTS = join(root, 'test-output', 'screenshots');

const tmp: string[] = [];
const tempDir = (tag: string) => {
  const d = mkdtempSync(join(tmpdir(), `rpcgate-docs-${tag}-`));
  tmp.push(d);
  return d;
};
afterAll(() => {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
});

/** Every relative href/src of every page, and every #fragment, checked against the files and ids on disk. */
function brokenLinks(dir: string): string[] {
  const pages = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.html'));
  const ids = new Map<string, Set<string>>();
  const idsOf = (file: string) => {
    if (!ids.has(file))
      ids.set(file, new Set([...readFileSync(file, 'utf8').matchAll(/\sid="([^"]+)"/g)].map((m) => m[1])));
    return ids.get(file)!;
  };
  const broken: string[] = [];
  for (const page of pages) {
    const html = readFileSync(join(dir, page), 'utf8');
    for (const [, link] of html.matchAll(/\s(?:href|src)="([^"]*)"/g)) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(link) || link.startsWith('//')) {
        broken.push(`${page}: not relative: ${link}`);
        continue;
      }
      const [file, frag] = link.split('#');
      const target = file ? join(dir, dirname(page), decodeURIComponent(file)) : join(dir, page);
      if (!existsSync(target)) broken.push(`${page}: ${link} (no such file)`);
      else if (frag && target.endsWith('.html') && !idsOf(target).has(decodeURIComponent(frag)))
        broken.push(`${page}: ${link} (no such anchor)`);
    }
  }
  return broken;
}

/** Runs assets/validators.js as a page would and returns its table. */
function browserValidatorTable(
  js: string,
): Record<string, ((data: unknown) => boolean) & { errors?: { instancePath: string; message: string }[] | null }> {
  const window: Record<string, never> = {};
  vm.runInNewContext(js, { window });
  return window.RPCGATE_DOCS_VALIDATORS;
}

describe('docs for every corpus document', () => {
  for (const file of CORPUS) {
    const name = file.slice(root.length + 1);
    it(`${name}: written, deterministic, a page per method, links and anchors resolve, browser validators agree with ajv`, async () => {
      const model = await loadDocument(file);
      expect(model.methods.length).toBeGreaterThan(0);
      const dir = tempDir('corpus');
      const written = await writeDocsTo(dir, model);
      for (const f of [
        'index.html',
        'schemas.html',
        'servers.html',
        'assets/style.css',
        'assets/try-it.js',
        'assets/validators.js',
      ])
        expect(written).toContain(f);

      // One page per method, named uniquely; each says which method it documents and carries a Try it panel for it.
      const files = methodFiles(model);
      expect(new Set([...files.values()].map((f) => f.toLowerCase())).size).toBe(model.methods.length);
      const index = readFileSync(join(dir, 'index.html'), 'utf8');
      for (const m of model.methods) {
        const html = readFileSync(join(dir, files.get(m.name)!), 'utf8');
        expect(html).toContain(`<h1><code>${m.name.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</code>`);
        const data = JSON.parse(html.match(/<script type="application\/json" id="try-it-data">([^<]*)<\/script>/)![1]);
        expect(data.method).toBe(m.name);
        expect(data.params.map((p: { name: string }) => p.name)).toEqual(m.params.map((p) => p.name));
        expect(data.servers.map((s: { url: string }) => s.url)).toEqual(model.servers.map((s) => s.url));
        expect(index).toContain(`href="${files.get(m.name)}"`);
        if (m.deprecated) expect(html).toContain('deprecated');
        for (const p of m.params) expect(html).toContain(`for="try-p-${m.params.indexOf(p)}"`);
      }
      expect(brokenLinks(dir)).toEqual([]);

      // Deterministic: a second run gives the same bytes.
      const again = writeDocs(await loadDocument(file));
      for (const f of written) expect(again.get(f), f).toBe(readFileSync(join(dir, f), 'utf8'));

      // The shipped validators decide like the run-time ones: on the example results, on a generated value and on a
      // value of the wrong type.
      const shipped = browserValidatorTable(readFileSync(join(dir, 'assets/validators.js'), 'utf8'));
      const runtime = compileValidators(model);
      expect(Object.keys(shipped).sort()).toEqual(model.methods.map((m) => m.name).sort());
      let compared = 0;
      for (const m of model.methods) {
        const values: Json[] = [
          ...m.examples.flatMap((x) => (x.result ? [x.result.value] : [])),
          { __not: ['the', 'result'] },
          'a string',
          12345,
        ];
        const sampled = sampleResult(model, m.name, runtime[m.name].result);
        if (sampled) values.push(sampled.value);
        for (const v of values) {
          expect(shipped[m.name](v), `${m.name}: ${JSON.stringify(v).slice(0, 80)}`).toBe(runtime[m.name].result(v));
          compared++;
        }
      }
      expect(compared).toBeGreaterThanOrEqual(model.methods.length * 3);
    }, 60_000);
  }
});

describe('what documents contain', () => {
  it('names that clash as file names, markup in texts, a script-closing string in an example: unique pages, escaped, data intact', async () => {
    const result = { name: 'r', schema: { type: 'string' } };
    const model = await modelDocument(
      {
        openrpc: '1.2.6',
        info: { title: 'Tricky <b>title</b>', version: '1' },
        methods: [
          {
            name: 'pet_get',
            summary: '<img src=x onerror=alert(1)>',
            params: [],
            result,
            examples: [{ name: 'x', params: [], result: { name: 'r', value: '</script><script>alert(1)</script>' } }],
          },
          { name: 'pet:gEt', params: [], result },
          {
            name: 'index',
            params: [{ name: 'class', required: true, schema: { type: 'string' } }],
            result,
            examples: [
              { name: 'e', params: [{ name: 'class', value: '</textarea><b>x' }], result: { name: 'r', value: 'ok' } },
            ],
          },
          { name: 'servers', deprecated: true, params: [], result },
        ],
      },
      { name: 'tricky', file: 'tricky.json' },
    );
    const files = methodFiles(model);
    expect([...files.values()]).toEqual(['pet_get.html', 'pet_gEt-2.html', 'index-2.html', 'servers-2.html']);
    const dir = tempDir('tricky');
    await writeDocsTo(dir, model);
    expect(brokenLinks(dir)).toEqual([]);
    const petGet = readFileSync(join(dir, 'pet_get.html'), 'utf8');
    expect(petGet).not.toContain('<img src=x');
    expect(petGet).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(petGet).not.toContain('<script>alert(1)');
    expect(readFileSync(join(dir, 'index.html'), 'utf8')).toContain('<h1>Tricky &lt;b&gt;title&lt;/b&gt;');
    const index2 = readFileSync(join(dir, 'index-2.html'), 'utf8');
    expect(index2).toContain(
      '<textarea id="try-p-0" rows="2" spellcheck="false">&quot;&lt;/textarea&gt;&lt;b&gt;x&quot;</textarea>',
    );
    const data = JSON.parse(index2.match(/<script type="application\/json" id="try-it-data">([^<]*)<\/script>/)![1]);
    expect(data).toMatchObject({
      document: 'tricky',
      method: 'index',
      byName: false,
      params: [{ name: 'class', required: true }],
    });
    expect(readFileSync(join(dir, 'servers-2.html'), 'utf8')).toContain(
      '<span class="tag deprecated">deprecated</span>',
    );
    // The overview links each method to its own page.
    const overview = readFileSync(join(dir, 'index.html'), 'utf8');
    for (const [name, file] of files) expect(overview).toContain(`<a href="${file}"><code>${name}</code></a>`);
  });
});

describe('rpcgate docs (CLI)', () => {
  it('writes the folder and says what it wrote', async () => {
    const dir = tempDir('cli');
    const out: string[] = [];
    const err: string[] = [];
    const code = await docsAction(
      join(EXAMPLES, 'simple-math-openrpc.json'),
      { out: dir },
      (s) => out.push(s),
      (s) => err.push(s),
    );
    expect(code).toBe(0);
    expect(err).toEqual([]);
    expect(out[0]).toBe(`Simple Math 1.0.0: 2 method page(s), 5 pages and 3 assets written to ${dir}`);
    expect(readdirSync(dir).sort()).toEqual([
      'addition.html',
      'assets',
      'index.html',
      'schemas.html',
      'servers.html',
      'subtraction.html',
    ]);
  });

  it('reads the document from an http(s) URL', async () => {
    const text = readFileSync(join(EXAMPLES, 'petstore-openrpc.json'));
    const server = createHttpServer((req, res) => {
      if (req.url === '/petstore.json') res.writeHead(200, { 'content-type': 'application/json' }).end(text);
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const dir = tempDir('cli-url');
      const out: string[] = [];
      expect(
        await docsAction(
          `${base}/petstore.json`,
          { out: dir },
          (s) => out.push(s),
          () => undefined,
        ),
      ).toBe(0);
      expect(out[0]).toMatch(/^Petstore 1\.0\.0: 3 method page\(s\)/);
      expect(readFileSync(join(dir, 'index.html'), 'utf8')).toContain(`<code>${base}/petstore.json</code>`);
      const err: string[] = [];
      expect(
        await docsAction(
          `${base}/missing.json`,
          { out: dir },
          () => undefined,
          (s) => err.push(s),
        ),
      ).toBe(1);
      expect(err).toEqual([`rpcgate docs: ${base}/missing.json: HTTP 404`]);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });

  it('a bad document: one line on stderr, exit 1 (real process)', async () => {
    const dir = tempDir('cli-bad');
    const run = (doc: string) =>
      exec(process.execPath, ['--import', 'tsx', join(root, 'src/cli/main.ts'), 'docs', doc, '--out', dir], {
        cwd: root,
        timeout: 60_000,
      }).then(
        () => ({ code: 0, stderr: '' }),
        (e: { code: number; stderr: string }) => ({ code: e.code, stderr: e.stderr }),
      );
    const notOpenRpc = await run(join(root, 'package.json'));
    expect(notOpenRpc.code).toBe(1);
    expect(notOpenRpc.stderr.trim().split('\n')).toHaveLength(1);
    expect(notOpenRpc.stderr).toContain('not an OpenRPC document');
    // JSON with an "openrpc" version but not a valid document: schema-utils-js's multi-line report, on one line.
    const bad = join(tempDir('bad-doc'), 'bad.json');
    writeFileSync(
      bad,
      JSON.stringify({ openrpc: '1.2.6', info: { title: 'x' }, methods: [{ name: 1, params: 'none' }] }),
    );
    const invalid = await run(bad);
    expect(invalid.code).toBe(1);
    expect(invalid.stderr.trim().split('\n')).toHaveLength(1);
    expect(invalid.stderr).toMatch(/^rpcgate docs: .*bad\.json: invalid OpenRPC 1\.2\.6 document/);
    const missing = await run(join(root, 'no-such-document.json'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^rpcgate docs: .*no-such-document\.json/);
    expect(readdirSync(dir)).toEqual([]);
  }, 120_000);
});

/** A handler of a document known only at run time (Handler<unknown> has no result type to check against). */
const handler = (fn: (params: unknown) => unknown): Handler<unknown> => fn as Handler<unknown>;

describe.skipIf(skipBrowser)('Try it, in Chromium, from file://', () => {
  let browser: Browser;
  let page: Page;
  const servers: RpcServer[] = [];
  const docs: Record<string, { dir: string; model: ContractModel }> = {};
  const urls: Record<string, { good: string; wrong: string }> = {};
  const offline: string[] = [];

  beforeAll(async () => {
    for (const [key, file] of [
      ['petstore', 'petstore-expanded-openrpc.json'],
      ['math', 'simple-math-openrpc.json'],
      ['byName', 'params-by-name-petstore-openrpc.json'],
    ] as const) {
      const model = await loadDocument(join(EXAMPLES, file));
      const dir = tempDir(key);
      await writeDocsTo(dir, model);
      docs[key] = { dir, model };
      // The mock of the same document (`rpcgate mock`): example pairings answered, else generated valid values.
      const good = await createMock({ document: model, seed: 1 });
      // One that answers the wrong shape (results unchecked, so the wrong shape reaches the page).
      const wrong = await createServer({
        document: model,
        strictResults: false,
        handlers:
          key === 'petstore'
            ? { get_pets: handler(() => [{ id: 'seven', name: 'Rex' }]) }
            : key === 'math'
              ? { addition: handler(() => 'four') }
              : {},
      });
      servers.push(good, wrong);
      urls[key] = { good: await good.listen(0, '127.0.0.1'), wrong: await wrong.listen(0, '127.0.0.1') };
    }
    mkdirSync(SHOTS, { recursive: true });
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-quic',
      ],
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 } });
    page = await context.newPage();
    // Only the pages' own files and the servers under test: no CDN, no font, nothing else.
    const allowed = Object.values(urls).flatMap((u) => [u.good, u.wrong]);
    context.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith('file://') && !allowed.some((a) => u.startsWith(a))) offline.push(u);
    });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    for (const s of servers) await s.close();
  });

  const open = async (key: string, method: string) => {
    const { dir, model } = docs[key];
    await page.goto(pathToFileURL(join(dir, methodFiles(model).get(method)!)).href);
    await page.locator('#try-send').waitFor();
  };
  const send = async (url: string) => {
    await page.locator('#try-url').fill(url);
    await page.locator('#try-send').click();
    await expect.poll(() => page.locator('#try-verdict').textContent(), { timeout: 10_000 }).not.toBe('');
    return (await page.locator('#try-verdict').textContent())!;
  };

  it('simple-math: server variables fill the URL; Send shows the example answer, "valid"; a wrong shape is "invalid" with the path', async () => {
    await open('math', 'addition');
    // The document's server, its variables at their defaults (it writes them ${name}); editing one changes the URL.
    expect(await page.locator('#try-server').inputValue()).toBe('s0');
    expect(await page.locator('#try-url').inputValue()).toBe('http://demo.simple-math.example.org:443/jsonrpc/');
    await page.getByLabel('port').selectOption('8545');
    expect(await page.locator('#try-url').inputValue()).toBe('http://demo.simple-math.example.org:8545/jsonrpc/');
    // The code samples follow the URL.
    expect(await page.locator('pre[data-rpc-url] code').first().textContent()).toContain(
      "'http://demo.simple-math.example.org:8545/jsonrpc/'",
    );
    // Params prefilled from the first example (2 + 2).
    expect(await page.locator('#try-p-0').inputValue()).toBe('2');
    expect(await page.locator('#try-p-1').inputValue()).toBe('2');

    expect(await send(urls.math.good)).toBe('valid');
    expect(await page.locator('#try-server').inputValue()).toBe('custom');
    expect(JSON.parse((await page.locator('#try-answer').textContent())!)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: 4,
    });
    expect(JSON.parse((await page.locator('#try-request').textContent())!)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'addition',
      params: [2, 2],
    });
    // Edited params: the second example's pair answers its own result.
    await page.locator('#try-p-0').fill('4');
    await page.locator('#try-p-1').fill('4');
    expect(await send(urls.math.good)).toBe('valid');
    expect(JSON.parse((await page.locator('#try-answer').textContent())!).result).toBe(8);
    // A param the server refuses: the error is shown as such, not as a result.
    await page.locator('#try-p-0').fill('"two"');
    expect(await send(urls.math.good)).toMatch(/^error -32602: /);
    // Not JSON: refused before sending.
    await page.locator('#try-p-0').fill('two');
    await page.locator('#try-send').click();
    expect(await page.locator('#try-status').textContent()).toMatch(/^param a is not JSON/);

    await page.locator('#try-p-0').fill('2');
    expect(await send(urls.math.wrong)).toBe('invalid: / must be integer');
    expect(JSON.parse((await page.locator('#try-answer').textContent())!).result).toBe('four');
    // The URL typed in is kept for the next page of the same document.
    await open('math', 'subtraction');
    expect(await page.locator('#try-url').inputValue()).toBe(urls.math.wrong);
  }, 60_000);

  it('petstore-expanded (no examples): params generated from the schemas, "valid" from the server, "invalid: /0/id …" from the wrong one', async () => {
    await open('petstore', 'get_pets');
    expect(await page.locator('#try-url').inputValue()).toBe('http://petstore.open-rpc.org');
    expect(await page.getByText('Params generated from the schemas').count()).toBe(1);
    const verdict = await send(urls.petstore.good);
    expect(verdict).toBe('valid');
    const answer = JSON.parse((await page.locator('#try-answer').textContent())!);
    expect(Array.isArray(answer.result)).toBe(true);
    expect(await page.locator('#try-verdict').getAttribute('class')).toBe('verdict valid');

    expect(await send(urls.petstore.wrong)).toBe('invalid: /0/id must be integer');
    expect(await page.locator('#try-verdict').getAttribute('class')).toBe('verdict invalid');
    await page.locator('#try-it').screenshot({ path: join(SHOTS, 'docs-try-it.png') });
    expect(existsSync(join(SHOTS, 'docs-try-it.png'))).toBe(true);

    // A method whose server has no handler for it: the JSON-RPC error is reported, not validated.
    await open('petstore', 'get_pet_by_id');
    await page.locator('#try-p-0').fill('1');
    expect(await send(urls.petstore.wrong)).toBe(
      'error -32601: method not supported: get_pet_by_id (a JSON-RPC error)',
    );
    expect(offline).toEqual([]);
  }, 60_000);

  it('params-by-name-petstore: a by-name method sends an object, and the example answer is "valid"', async () => {
    await open('byName', 'list_pets');
    expect(await page.locator('#try-p-0').inputValue()).toBe('1');
    expect(await send(urls.byName.good)).toBe('valid');
    expect(JSON.parse((await page.locator('#try-request').textContent())!)).toEqual({
      jsonrpc: '2.0',
      id: 1,
      method: 'list_pets',
      params: { limit: 1 },
    });
    expect(JSON.parse((await page.locator('#try-answer').textContent())!).result).toEqual([
      { id: 7, name: 'fluffy', tag: 'poodle' },
    ]);
    // An empty optional param is left out of the object.
    await page.locator('#try-p-0').fill('');
    expect(await send(urls.byName.good)).toBe('valid');
    expect(JSON.parse((await page.locator('#try-request').textContent())!).params).toEqual({});
    expect(offline).toEqual([]);
  }, 60_000);
  it("served by rpcgate at /docs/: the signed-in user's app and key URLs are offered; signed out, none (silently)", async () => {
    const dataDir = tempDir('svc');
    // One stand-in network (nothing listens on its upstream: no node is called), the repository's docs/ as generated.
    const svc: RunningService = await startService({
      port: 0,
      logLevel: 'silent',
      devKey: false,
      dataDir,
      docsDir: join(root, 'docs'),
      networks: { mainnet: { upstreams: ['http://127.0.0.1:9'], chainId: 1 } },
      chains: { ethereum: ['mainnet'] },
    });
    const context = await browser.newContext({ viewport: { width: 1280, height: 1000 }, baseURL: svc.url });
    try {
      const call = async (method: string, params: unknown[]) => {
        const res = await context.request.post('/api', { data: { jsonrpc: '2.0', id: 1, method, params } });
        const body = await res.json();
        if (body.error) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
        return body.result;
      };
      const p = await context.newPage();
      const errors: string[] = [];
      p.on('pageerror', (e) => errors.push(e.message));
      // Not signed in: the document's servers only.
      await p.goto('/docs/api/node/eth_blockNumber.html');
      await p.locator('#try-send').waitFor();
      await p.waitForLoadState('networkidle');
      expect(await p.locator('#try-server optgroup').count()).toBe(0);
      expect(await p.locator('#try-url').inputValue()).toBe('http://127.0.0.1:8080/mainnet/v2/YOUR_API_KEY');

      await call('account_signUp', [{ email: 'docs@example.com', password: 'correct horse battery' }]);
      await call('account_logIn', [{ email: 'docs@example.com', password: 'correct horse battery' }]);
      const created = await call('apps_create', [
        { name: 'Docs app', useCase: 'Defi', chain: 'ethereum', services: ['node-api'] },
      ]);
      const app = await call('apps_get', [created.id ?? created.app?.id]);
      const key = await call('keys_create', [{ name: 'docs key', network: 'mainnet' }]);
      const appUrl = app.urls.mainnet as string;
      const keyUrl = (key.url ?? key.key?.url) as string;
      expect(appUrl).toContain(`${svc.url}/mainnet/v2/`);

      await p.reload();
      await expect
        .poll(() => p.locator('#try-server optgroup').getAttribute('label'), { timeout: 10_000 })
        .toBe('Your keys (signed in)');
      const offered = await p.locator('#try-server optgroup option').allTextContents();
      expect(offered).toEqual(['App Docs app — mainnet', 'Key docs key — mainnet']);
      // The first key is chosen (the user picked nothing yet); its URL goes into the panel and the code samples.
      expect(await p.locator('#try-url').inputValue()).toBe(appUrl);
      expect(await p.locator('pre[data-rpc-url] code').first().textContent()).toContain(appUrl);
      await p.locator('#try-server').selectOption({ label: 'Key docs key — mainnet' });
      expect(await p.locator('#try-url').inputValue()).toBe(keyUrl);
      await p.screenshot({ path: join(SHOTS, 'docs-try-it-keys.png') });

      // Signed out: no suggestion, no error in the page.
      await call('account_logOut', []);
      await p.reload();
      await p.waitForLoadState('networkidle');
      expect(await p.locator('#try-server optgroup').count()).toBe(0);
      expect(errors).toEqual([]);
    } finally {
      await context.close();
      await svc.stop();
    }
  }, 120_000);
});
