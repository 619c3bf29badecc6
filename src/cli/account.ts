// Shared runtime of the account commands (signup, login, logout, whoami, apps, keys, chains, use-cases): the
// `--server`/`--json` options, the generated account API client (generated/account/client.ts) with a fetch that
// sends and keeps the session cookie (src/cli/session.ts), output, and errors.
//
// Output contract: with `--json`, stdout holds exactly one JSON object — the result, or `{ "error": { code, message,
// data } }` — and nothing else; prompts and notes go to stderr. Without it, short human text on stdout and
// `error: <message> (<data summary>)` on stderr. Any error exits 1.
import { createInterface } from 'node:readline/promises';
import type { Command } from 'commander';
import {
  createClient,
  RpcClientError,
  type AccountClient,
  type ChainNetwork,
  type Service,
} from '../../generated/account/client.js';
import { ErrorCode } from '@rpcgate/toolkit/errors';
import { GatewayErrorCode } from '../gateway/errors.js';
import { summarizeData } from './output.js';
import { SESSION_COOKIE, SessionStore, type StoredSession } from './session.js';

export const DEFAULT_SERVER = 'http://127.0.0.1:8080';
/** Per HTTP call to the account API. */
const TIMEOUT_MS = 30_000;

/**
 * Every service the contract knows (its `Service` enum). Typed as a mapped type so `tsc` fails here when the
 * contract adds one; `--services` defaults to the only one while there is only one.
 */
const SERVICES: { [S in Service]: true } = { 'node-api': true };
export const ALL_SERVICES = Object.keys(SERVICES) as Service[];

export interface ApiFlags {
  server?: string;
  json?: boolean;
}

export interface Output {
  /** Printed with --json (one object). */
  json: object;
  /** Printed otherwise. */
  text: string;
}

/** An error found before or beside the API (bad flag value, missing input, unreachable server). */
export class CliError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

export const usage = (message: string, data?: unknown) => new CliError(ErrorCode.InvalidParams, message, data);

export interface ServerRef {
  /** Session key: the scheme, host and port the cookie belongs to. */
  origin: string;
  /** The account API endpoint (`<server>/api`). */
  apiUrl: string;
}

export function resolveServer(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): ServerRef {
  const raw = flag ?? env.RPCGATE_SERVER ?? DEFAULT_SERVER;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw usage(`--server: not a URL: ${raw}`, { flag: '--server', value: raw });
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw usage(`--server: must be http(s): ${raw}`, { flag: '--server', value: raw });
  // Accept both the deployment's base URL and the endpoint itself.
  const path = u.pathname.replace(/\/+$/, '');
  u.pathname = path.endsWith('/api') ? path : `${path}/api`;
  u.search = '';
  u.hash = '';
  return { origin: u.origin, apiUrl: u.href };
}

export function addApiOptions(cmd: Command): Command {
  return cmd
    .option('--server <url>', `rpcgate server (env RPCGATE_SERVER, default ${DEFAULT_SERVER})`)
    .option('--json', 'print exactly one JSON object on stdout');
}

export interface ApiContext {
  api: AccountClient;
  server: ServerRef;
  json: boolean;
  sessions: SessionStore;
  /** The stored session sent with this run's calls (none for signup/login). */
  session?: StoredSession;
  /** Set by signup/login so the stored session names its user. */
  user?: { id: string; email: string; expiresAt?: string };
}

interface CookieChange {
  /** `rpcgate_session=<token>`, or '' when the server cleared it. */
  pair: string;
  maxAgeS?: number;
}

export interface RunOptions {
  /** signup/login: start without the stored session and store the one the server sets. */
  newSession?: boolean;
}

/** Runs one account command: builds the client, calls `body`, prints, keeps the session, sets the exit code. */
export async function runApi(
  flags: ApiFlags,
  body: (ctx: ApiContext) => Promise<Output>,
  opts: RunOptions = {},
): Promise<void> {
  const json = flags.json === true;
  let ctx: ApiContext | undefined;
  let change: CookieChange | undefined;
  try {
    const server = resolveServer(flags.server);
    const sessions = new SessionStore();
    const session = opts.newSession ? undefined : sessions.get(server.origin);
    const fetchWithSession: typeof fetch = async (input, init) => {
      const headers = new Headers(init?.headers);
      const cookie = change ? change.pair : session?.cookie;
      if (cookie) headers.set('cookie', cookie);
      let res: Response;
      try {
        res = await fetch(input, { ...init, headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
      } catch (e) {
        throw transportError(server, e);
      }
      for (const sc of res.headers.getSetCookie()) {
        const [pair, ...attrs] = sc.split(';').map((s) => s.trim());
        if (!pair.startsWith(`${SESSION_COOKIE}=`)) continue;
        const maxAge = attrs.find((a) => /^max-age=/i.test(a));
        const cleared = pair === `${SESSION_COOKIE}=` || maxAge?.toLowerCase() === 'max-age=0';
        change = cleared ? { pair: '' } : { pair, maxAgeS: maxAge ? Number(maxAge.slice(8)) : undefined };
      }
      return res;
    };
    ctx = { api: createClient({ url: server.apiUrl, fetch: fetchWithSession }), server, json, sessions, session };
    const out = await body(ctx);
    if (opts.newSession && !change?.pair)
      throw new CliError(
        ErrorCode.InternalError,
        `${server.origin} answered without a session cookie (${SESSION_COOKIE})`,
      );
    keepSession(ctx, change);
    write(json ? `${JSON.stringify(out.json, null, 2)}\n` : `${out.text}\n`);
  } catch (e) {
    if (ctx) {
      try {
        keepSession(ctx, change);
        // The stored session is dead (expired, logged out elsewhere): forget it.
        if (!opts.newSession && ctx.session && isNoSession(e)) ctx.sessions.delete(ctx.server.origin);
      } catch {
        // The command's own error matters more than a session file problem.
      }
    }
    report(e, json, ctx?.server);
    process.exitCode = 1;
  }
}

function keepSession(ctx: ApiContext, change: CookieChange | undefined): void {
  if (!change) return;
  if (!change.pair) {
    ctx.sessions.delete(ctx.server.origin);
    return;
  }
  const expiresAt =
    ctx.user?.expiresAt ??
    (change.maxAgeS !== undefined && Number.isFinite(change.maxAgeS)
      ? new Date(Date.now() + change.maxAgeS * 1000).toISOString()
      : undefined);
  ctx.sessions.set(ctx.server.origin, {
    cookie: change.pair,
    expiresAt,
    email: ctx.user?.email ?? ctx.session?.email,
    userId: ctx.user?.id ?? ctx.session?.userId,
    savedAt: new Date().toISOString(),
  });
}

const isNoSession = (e: unknown) =>
  e instanceof RpcClientError &&
  e.code === GatewayErrorCode.Unauthorized &&
  (e.data as { reason?: unknown } | undefined)?.reason === 'session';

function transportError(server: ServerRef, e: unknown): CliError {
  const err = e as Error & { cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') {
    return new CliError(
      ErrorCode.InternalError,
      `no answer from rpcgate at ${server.apiUrl} within ${TIMEOUT_MS / 1000} s`,
      {
        reason: 'timeout',
        server: server.apiUrl,
      },
    );
  }
  const cause = err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
  return new CliError(
    ErrorCode.InternalError,
    `cannot reach rpcgate at ${server.apiUrl} (${cause}); is it running? (--server, RPCGATE_SERVER)`,
    {
      reason: 'unreachable',
      server: server.apiUrl,
      cause,
    },
  );
}

function write(s: string): void {
  process.stdout.write(s);
}

function report(e: unknown, json: boolean, server: ServerRef | undefined): void {
  let code: number;
  let message: string;
  let data: unknown;
  if (e instanceof RpcClientError || e instanceof CliError) {
    ({ code, message, data } = e);
  } else {
    code = ErrorCode.InternalError;
    message = (e as Error)?.message ?? String(e);
  }
  if (json) {
    write(`${JSON.stringify({ error: data === undefined ? { code, message } : { code, message, data } }, null, 2)}\n`);
    return;
  }
  // A CLI error's message says it all; a server error's data says which field and why.
  const summary = e instanceof RpcClientError ? summarizeData(data) : undefined;
  process.stderr.write(`error: ${message}${summary ? ` (${summary})` : ''}\n`);
  if (isNoSession(e)) process.stderr.write(`hint: rpcgate login --server ${server?.origin ?? DEFAULT_SERVER}\n`);
}

// ---- input ----------------------------------------------------------------------------------------------------

/** Reads a line from the terminal (on stderr, so stdout stays clean); `hidden` does not echo it. */
export async function prompt(question: string, hidden = false): Promise<string> {
  const { stdin, stderr } = process;
  if (!hidden) {
    const rl = createInterface({ input: stdin, output: stderr });
    try {
      return (await rl.question(question)).trim();
    } finally {
      rl.close();
    }
  }
  return new Promise((resolve, reject) => {
    let buf = '';
    const finish = (err?: Error) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      if (err) reject(err);
      else resolve(buf);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n' || ch === '\u0004') return finish();
        if (ch === '\u0003') return finish(usage('cancelled'));
        if (ch === '\u007f' || ch === '\b') buf = buf.slice(0, -1);
        else buf += ch;
      }
    };
    stderr.write(question);
    stdin.setEncoding('utf8');
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

const interactive = () => process.stdin.isTTY === true && process.stderr.isTTY === true;

/** `--email`, else RPCGATE_EMAIL, else a prompt on a terminal. */
export async function readEmail(flag: string | undefined): Promise<string> {
  const v = flag ?? process.env.RPCGATE_EMAIL;
  if (v) return v;
  if (interactive()) return prompt('email: ');
  throw usage('--email is required (or RPCGATE_EMAIL)', { flag: '--email' });
}

/** `--password`, else RPCGATE_PASSWORD, else a hidden prompt on a terminal (twice when `confirm`). */
export async function readPassword(flag: string | undefined, confirm = false): Promise<string> {
  const v = flag ?? process.env.RPCGATE_PASSWORD;
  if (v) return v;
  if (!interactive())
    throw usage('--password is required (or RPCGATE_PASSWORD; a prompt needs a terminal)', { flag: '--password' });
  const p = await prompt('password: ', true);
  if (confirm && (await prompt('password (again): ', true)) !== p) throw usage('the passwords differ');
  return p;
}

// ---- flag values (checked in the action, so a bad one is reported like any error, also with --json) ---------

/** A flag the command needs. */
export function need<T>(v: T | undefined, flag: string, hint = ''): T {
  if (v === undefined) throw usage(`${flag} is required${hint ? `: ${hint}` : ''}`, { flag });
  return v;
}

/** `--network`: one of the deployment's networks (from networks_list), by name or display name, any case. */
export function parseNetwork(v: string, networks: readonly ChainNetwork[]): string {
  const want = v.trim().toLowerCase();
  const n = networks.find((x) => x.network.toLowerCase() === want || x.label.toLowerCase() === want);
  if (n !== undefined) return n.network;
  const choices = networks.map((x) => x.network);
  throw usage(`--network: unknown network ${JSON.stringify(v)}: this deployment's networks are ${choices.join(', ')}`, {
    flag: '--network',
    choices,
  });
}

/** `--services a,b`: a comma list, trimmed, without duplicates (the server checks the names). */
export function parseServices(v: string): Service[] {
  const list = [
    ...new Set(
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  ];
  if (list.length === 0)
    throw usage('--services: a comma list of at least one service, e.g. node-api', {
      flag: '--services',
      choices: ALL_SERVICES,
    });
  return list as Service[];
}

export function parseOnOff(v: string): boolean {
  const s = v.trim().toLowerCase();
  if (['on', 'true', 'yes', '1'].includes(s)) return true;
  if (['off', 'false', 'no', '0'].includes(s)) return false;
  throw usage(`must be on or off, got ${JSON.stringify(v)}`, { choices: ['on', 'off'] });
}
