// Every error rpcgate answers with on its own is built from the one table (src/gateway/errors.ts GATEWAY_ERRORS) by
// its reason: `gatewayError` takes the code and the allowed HTTP statuses from the reason's row and adds data.source.
// The scan below reads the syntax of every tracked source file under src/ (not its comments), so a hand-built error
// cannot come back: `new RpcError(` only where the error tables live, and no object literal with a JSON-RPC code.
// The toolkit's standard -326xx constructors (packages/toolkit/src/rpc/errors.ts) are outside src/ and not rpcgate's.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { GATEWAY_ERRORS, SOURCE, gatewayError, gatewayErrorMeaning } from '../src/gateway/errors.js';
import { filterNotFound, tooManyFilters } from '../src/gateway/filters/filters.js';
import { notificationsNotSupported } from '../src/gateway/subscriptions/manager.js';
import { throttled } from '../src/gateway/accounts/throttle.js';
import type { RpcError } from '../packages/toolkit/src/rpc/errors.js';

const root = join(import.meta.dirname, '..');

/** Where `new RpcError(` may stand, and why. */
const TABLES: Record<string, string> = {
  'src/gateway/errors.ts': "the gateway's table and its one constructor",
  'src/gateway/accounts/errors.ts': "the account API's own codes (-32010, -32011, the per-user count limit)",
  'src/gateway/upstream/errors.ts': "a node's own error passed through unchanged (not rpcgate's)",
};

interface Finding {
  file: string;
  line: number;
  what: string;
}

/** Hand-built JSON-RPC errors in one source outside the tables: `new RpcError(` and object literals `{ code: -32xxx }`. */
function handBuilt(file: string, text: string): Finding[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const out: Finding[] = [];
  const at = (n: ts.Node, what: string) =>
    out.push({ file, line: sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1, what });
  const visit = (n: ts.Node): void => {
    if (ts.isNewExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === 'RpcError')
      at(n, 'new RpcError(');
    if (
      ts.isPropertyAssignment(n) &&
      (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name)) &&
      n.name.text === 'code' &&
      ts.isPrefixUnaryExpression(n.initializer) &&
      n.initializer.operator === ts.SyntaxKind.MinusToken &&
      ts.isNumericLiteral(n.initializer.operand) &&
      /^32\d{3}$/.test(n.initializer.operand.text)
    )
      at(n, `code: -${n.initializer.operand.text}`);
    ts.forEachChild(n, visit);
  };
  if (!(file in TABLES)) visit(sf);
  return out;
}

describe('gateway errors come from the table', () => {
  it('no source under src/ builds a JSON-RPC error by hand outside the error tables', () => {
    const files = execFileSync('git', ['ls-files', 'src'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((f) => /\.(ts|tsx)$/.test(f) && !f.endsWith('.d.ts'));
    expect(files.length).toBeGreaterThan(100);
    const found = files.flatMap((f) => handBuilt(f, readFileSync(join(root, f), 'utf8')));
    expect(found).toEqual([]);
  });

  it('the scan sees what it is for (it is not vacuous)', () => {
    const sample = [
      "const a = new RpcError(-32000, 'filter not found');",
      "const b = { jsonrpc: '2.0', error: { code: -32600, message: 'x' } };",
      "const c = { 'code': -32005 };",
      '// new RpcError(-32000) in a comment, and code: -32601 too',
      'const d = e.code === -32602;',
      "const f = gatewayError('x', { reason: 'filters' });",
    ].join('\n');
    expect(handBuilt('src/x.ts', sample).map((x) => [x.line, x.what])).toEqual([
      [1, 'new RpcError('],
      [2, 'code: -32600'],
      [3, 'code: -32005'],
    ]);
    expect(handBuilt('src/gateway/errors.ts', sample)).toEqual([]);
  });

  it('each reason word is in exactly one row, so a reason picks the code', () => {
    const words = GATEWAY_ERRORS.flatMap((r) => [...r.reasons]);
    expect(new Set(words).size).toBe(words.length);
  });

  it('gatewayError: the code and default status are the reason row`s, data.source is added, an undocumented status throws', () => {
    const e = gatewayError('too many', { reason: 'subscriptions', limit: 3 });
    expect([e.code, e.httpStatus, e.data]).toStrictEqual([
      -32005,
      429,
      { source: SOURCE, reason: 'subscriptions', limit: 3 },
    ]);
    expect(gatewayError('q', { reason: 'quota' }, 402).httpStatus).toBe(402);
    expect(() => gatewayError('x', { reason: 'key' }, 500)).toThrow(/HTTP 500 is not documented for Unauthorized/);
    expect(() => gatewayError('x', { reason: 'nope' as 'key' })).toThrow(/in no row/);
  });

  it('the errors once built by hand (filters, throttle, subscriptions over HTTP) are rows by their reason', () => {
    const cases: [RpcError, string, number, string][] = [
      [filterNotFound(), 'filter-not-found', -32000, 'validation'],
      [tooManyFilters(10), 'filters', -32000, 'limit'],
      [throttled('ip', 10, 30, 0), 'rate', -32005, 'limit'],
      [notificationsNotSupported('eth_subscribe'), 'transport', -32601, 'validation'],
    ];
    for (const [e, reason, code, outcome] of cases) {
      expect([e.code, (e.data as { source: string }).source, (e.data as { reason: string }).reason], reason).toEqual([
        code,
        SOURCE,
        reason,
      ]);
      expect(gatewayErrorMeaning(e), reason).toEqual({ outcome, reason });
      const row = GATEWAY_ERRORS.find((r) => (r.reasons as readonly string[]).includes(reason))!;
      expect(row.httpStatus as readonly number[], reason).toContain(e.httpStatus);
    }
    // geth's words kept: clients match these messages.
    expect(filterNotFound().message).toBe('filter not found');
    expect(notificationsNotSupported('eth_subscribe').message).toMatch(/^notifications not supported/);
    expect(throttled('ip', 10, 30, 0).headers).toEqual({ 'Retry-After': '30' });
  });
});
