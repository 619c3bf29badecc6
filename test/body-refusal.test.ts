// Issue 14.6: a refused request's body is not read to the end. A raw client (node:net) streams 50 MB to an invalid key,
// to the account API and to a valid key on the wrong network — with Content-Length and chunked — and the server must
// answer (401 / 413 / 403, `Connection: close`) and close the connection while the bytes it let in (the client's
// bytesWritten when the socket closes: what the server read plus what the kernels' buffers held) stay far below what
// the client meant to send. No regression: keep-alive clients keep their connection after normal calls and after a
// refusal with a small body.
import { mkdtempSync, rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';
import { newNetworkKey } from './helpers/rpcgate-child.js';
import { startStubNode, type StubNode } from './helpers/stub-node.js';

const TOTAL = 50 * 1024 * 1024;
const CHUNK = Buffer.alloc(64 * 1024, 0x20); // spaces: valid JSON whitespace, so only the size matters

interface Streamed {
  /** The response head and body as received. */
  response: string;
  /** Bytes of body the client got into the connection before it closed. */
  accepted: number;
  /** The server closed the connection (end or reset). */
  closed: boolean;
}

/** Streams `TOTAL` bytes of body to `path` on a raw connection, reading the answer meanwhile; stops when the server
 *  closes the connection (or after `deadlineMs`: then closed is false). */
function stream(base: string, path: string, mode: 'length' | 'chunked', deadlineMs = 20_000): Promise<Streamed> {
  const u = new URL(base);
  return new Promise((resolve) => {
    const s: Socket = connect(Number(u.port), u.hostname);
    let response = '';
    let closed = false;
    let head = 0;
    const finish = () => {
      clearTimeout(deadline);
      const accepted = Math.max(0, s.bytesWritten - head);
      s.destroy();
      resolve({ response, accepted, closed });
    };
    const deadline = setTimeout(finish, deadlineMs);
    s.setEncoding('latin1');
    s.on('data', (d: string) => (response += d));
    s.on('error', () => {});
    s.on('close', () => {
      closed = true;
      finish();
    });
    s.on('end', () => {
      closed = true;
      finish();
    });
    s.on('connect', async () => {
      const h =
        `POST ${path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\n` +
        (mode === 'length' ? `Content-Length: ${TOTAL}\r\n\r\n` : 'Transfer-Encoding: chunked\r\n\r\n');
      head = Buffer.byteLength(h);
      s.write(h);
      for (let sent = 0; sent < TOTAL && !closed && !s.destroyed; sent += CHUNK.length) {
        const ok =
          mode === 'length'
            ? s.write(CHUNK)
            : s.write(`${CHUNK.length.toString(16)}\r\n`) && s.write(CHUNK) && s.write('\r\n');
        if (!ok)
          await new Promise<void>((r) => {
            s.once('drain', r);
            s.once('close', r);
          });
      }
      if (mode === 'chunked' && !closed && !s.destroyed) s.write('0\r\n\r\n');
    });
  });
}

/** Requests written one after another on one raw connection; the answers (each complete), and whether it stayed open. */
async function keepAlive(
  base: string,
  requests: Array<{ path: string; body: string }>,
): Promise<{ answers: string[]; open: boolean }> {
  const u = new URL(base);
  const s = connect(Number(u.port), u.hostname);
  await new Promise((r) => s.once('connect', r));
  let buf = '';
  let open = true;
  s.setEncoding('utf8').on('data', (d: string) => (buf += d));
  s.on('close', () => (open = false));
  const answers: string[] = [];
  for (const r of requests) {
    buf = '';
    s.write(
      `POST ${r.path} HTTP/1.1\r\nHost: ${u.host}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(r.body)}\r\n\r\n${r.body}`,
    );
    const t0 = Date.now();
    while (Date.now() - t0 < 5_000) {
      const m = /content-length: (\d+)\r\n[\s\S]*?\r\n\r\n/i.exec(buf);
      if (m && buf.length >= m.index + m[0].length + Number(m[1])) break;
      await new Promise((res) => setTimeout(res, 10));
    }
    answers.push(buf);
  }
  await new Promise((res) => setTimeout(res, 200)); // a close would have arrived by now
  const stillOpen = open && !s.destroyed;
  s.destroy();
  return { answers, open: stillOpen };
}

describe('bodies after a refusal are not read to the end', () => {
  let svc: RunningService;
  let main: StubNode;
  let test: StubNode;
  let dataDir: string;
  let testnetKey: string;

  beforeAll(async () => {
    [main, test] = await Promise.all([startStubNode(), startStubNode()]);
    dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-body-refusal-'));
    svc = await startService({
      port: 0,
      logLevel: 'silent',
      devKey: false,
      dataDir,
      networks: { mainnet: { upstreams: [main.url] }, testnet: { upstreams: [test.url] } },
    });
    testnetKey = (await newNetworkKey(svc.url, 'testnet')).key;
  });
  afterAll(async () => {
    await svc?.stop();
    await Promise.all([main?.close(), test?.close()]);
    rmSync(dataDir, { recursive: true, force: true });
  });

  const targets = [
    { name: 'an invalid key', path: () => '/mainnet/not-a-key-at-all', status: 401 },
    { name: 'the account API (/api)', path: () => '/api', status: 413 },
    { name: 'a valid key on the wrong network', path: () => `/mainnet/${testnetKey}`, status: 403 },
  ];
  for (const t of targets) {
    for (const mode of ['length', 'chunked'] as const) {
      it(`${t.name}, 50 MB ${mode === 'length' ? 'with Content-Length' : 'chunked'}: answered ${t.status}, then closed; the bytes let in stay far below`, {
        timeout: 30_000,
      }, async () => {
        const r = await stream(svc.url, t.path(), mode);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(r.response)?.[1]);
        console.log(
          `[body-refusal] ${t.name}, ${mode}: HTTP ${status}, closed ${r.closed}, accepted ${(r.accepted / 1048576).toFixed(2)} MB of ${TOTAL / 1048576} MB`,
        );
        expect(status).toBe(t.status);
        expect(r.response).toMatch(/\r\nconnection: close\r\n/i);
        expect(r.response).toMatch(/"jsonrpc":"2\.0"/);
        expect(r.closed).toBe(true);
        expect(r.accepted).toBeLessThan(TOTAL / 5); // client and server kernel buffers on loopback hold a few MB at most
        // The server is fine afterwards.
        const ok = await fetch(`${svc.url}/testnet/${testnetKey}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}',
        });
        expect(await ok.json()).toEqual({ jsonrpc: '2.0', id: 1, result: '0x10' });
      });
    }
  }

  it('keep-alive: normal calls, and a refusal with a small body, keep the connection', async () => {
    const call = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';
    const r = await keepAlive(svc.url, [
      { path: `/testnet/${testnetKey}`, body: call },
      { path: `/testnet/${testnetKey}`, body: call },
      { path: '/mainnet/not-a-key-at-all', body: call },
      { path: `/testnet/${testnetKey}`, body: call },
    ]);
    expect(r.answers.map((a) => Number(a.slice(9, 12)))).toEqual([200, 200, 401, 200]);
    for (const a of r.answers) expect(a).not.toMatch(/\r\nconnection: close\r\n/i);
    expect(r.open).toBe(true);
  });
});
