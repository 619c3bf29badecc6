// Every shell command of README.md runs as written (issue 21 item 4): each ```sh block, in order, with bash -euo
// pipefail, against a live service on a free port (the README's http://127.0.0.1:8080 is replaced by its URL — the
// only substitution), with $KEY its development key and a CLI session folder of this run. Blocks that cannot run
// here are listed below with the reason; each entry must match exactly one block, so the list cannot go stale.
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startService, type RunningService } from '../src/gateway/server/index.js';

const ROOT = resolve(import.meta.dirname, '..');
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** Blocks not run here: a unique line of the block → why. */
const NOT_RUN: Record<string, string> = {
  'npm install && npm start': 'starts the service until stopped: test/first-run.test.ts runs npm start and stops it',
  'rpcgate admin grant ops@example.com --data-dir /var/lib/rpcgate':
    "an operator's host: the store's path and existing accounts are the deployment's; test/admin.test.ts runs these commands",
  'rpcgate admin invite --email new@example.com':
    'needs an admin session on a deployment with accounts.signup invite (this run is open, without admins); test/signup-invites.test.ts runs rpcgate admin invite / invites and rpcgate signup --invite',
};

/** What a block's output must show beyond exiting 0, by a unique line of the block. */
const EXPECT: Record<string, RegExp> = {
  'curl -s http://127.0.0.1:8080/mainnet/v2/$KEY': /"result":"0x[0-9a-f]+"/,
  'npx rpcgate keys create --server': /testnet/,
  'npx rpcgate keys create --name backend': /"key":/,
  'openssl genpkey': /"result":"0x[0-9a-f]+"/,
  'npx rpcgate mock openrpc.json': /passed/i,
};

const blocks = [...README.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((m) => m[1]);

let svc: RunningService;
let dataDir: string;
let work: string;
let sessions: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'rpcgate-readme-'));
  sessions = mkdtempSync(join(tmpdir(), 'rpcgate-readme-cli-'));
  // Inside the checkout (git-ignored scratch/), so `npx rpcgate` finds this package's bin as it does for a reader.
  work = join(ROOT, 'scratch', `readme-${randomBytes(4).toString('hex')}`);
  mkdirSync(work, { recursive: true });
  // The toolkit section works "in a folder holding your openrpc.json": this repository's stands in for it.
  copyFileSync(join(ROOT, 'openrpc.json'), join(work, 'openrpc.json'));
  svc = await startService({ port: 0, logLevel: 'silent', dataDir, devKey: true });
}, 120_000);

afterAll(async () => {
  await svc?.stop();
  for (const d of [dataDir, sessions, work]) if (d) rmSync(d, { recursive: true, force: true });
});

describe('README.md shell commands', () => {
  it('finds the blocks, and every exemption names one of them', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(5);
    for (const line of [...Object.keys(NOT_RUN), ...Object.keys(EXPECT)])
      expect(
        blocks.filter((b) => b.includes(line)),
        line,
      ).toHaveLength(1);
  });

  it('runs every block as written (in order: later blocks use the account the earlier ones made)', async () => {
    const ran: string[] = [];
    for (const block of blocks) {
      const skip = Object.keys(NOT_RUN).find((l) => block.includes(l));
      if (skip !== undefined) {
        console.log(`[readme] not run: ${skip} — ${NOT_RUN[skip]}`);
        continue;
      }
      if (block.includes('npm install && npm test')) continue; // this suite is that command
      const script = block.replaceAll('http://127.0.0.1:8080', svc.url);
      // Not spawnSync: the service answering these commands runs on this event loop.
      const r = await bash(script, { ...process.env, KEY: svc.key, RPCGATE_CONFIG_DIR: sessions, RPCGATE_SERVER: '' });
      const first = block.split('\n')[0];
      expect(r.status, `${first}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`).toBe(0);
      const want = Object.entries(EXPECT).find(([l]) => block.includes(l));
      if (want !== undefined) expect(r.stdout, first).toMatch(want[1]);
      expect(r.stdout + r.stderr, first).not.toMatch(/"error":\{/);
      ran.push(first);
    }
    console.log(`[readme] ran ${ran.length} blocks:\n  ${ran.join('\n  ')}`);
    expect(ran.length).toBe(
      blocks.length - Object.keys(NOT_RUN).length - blocks.filter((b) => b.includes('npm install && npm test')).length,
    );
  }, 300_000);
});

function bash(
  script: string,
  env: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const p = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd: work, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    p.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const t = setTimeout(() => p.kill('SIGKILL'), 120_000);
    p.once('close', (status) => {
      clearTimeout(t);
      done({ status, stdout, stderr });
    });
  });
}
