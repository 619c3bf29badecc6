// Issue 19 item 3: the mock answers a valid value for every satisfiable result schema (one method per construct in
// test/fixtures/openrpc/mock-satisfiable.openrpc.json), over real HTTP, checked by conformance against the document;
// the result schemas that admit no value are warnings naming their JSON pointer (a defect of the document), and the
// mock is deterministic per seed.
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMock, specConformance, type MockServer } from '@rpcgate/toolkit';

const doc = resolve(import.meta.dirname, 'fixtures/openrpc/mock-satisfiable.openrpc.json');
const UNSAT: Record<string, RegExp> = {
  unsatAllOf: /#\/methods\/\d+\/result\/schema\/allOf\/0\/additionalProperties/,
  unsatBounds: /#\/methods\/\d+\/result\/schema\/maximum/,
  unsatEnumType: /#\/methods\/\d+\/result\/schema\/enum/,
  unsatFalse: /#\/methods\/\d+\/result\/schema/,
};

async function answers(url: string, methods: string[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const [i, method] of methods.entries()) {
    const r = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: i, method, params: [] }),
    });
    out[method] = await r.json();
  }
  return out;
}

describe('mock of every satisfiable construct', () => {
  const mocks: MockServer[] = [];
  const urls: string[] = [];
  beforeAll(async () => {
    for (const seed of [1, 1, 2]) {
      const m = await createMock({ document: doc, seed });
      mocks.push(m);
      urls.push(await m.listen(0, '127.0.0.1'));
    }
  });
  afterAll(() => Promise.all(mocks.map((m) => m.close())));

  it('conformance: every satisfiable method passes, each unsatisfiable one is a warning naming its pointer', async () => {
    const report = await specConformance(urls[0], doc, { timeoutMs: 10_000 });
    const rows = report.methods;
    expect(rows.filter((r) => r.status === 'FAIL').map((r) => `${r.name}: ${r.detail}`)).toEqual([]);
    expect(report.ok).toBe(true);
    for (const r of rows) {
      if (r.name in UNSAT) {
        expect(r.status, r.name).toBe('WARN');
        expect(r.detail).toMatch(UNSAT[r.name]);
        expect(r.detail).toContain('-32603');
      } else expect(r.status, `${r.name}: ${r.detail}`).toBe('PASS');
    }
    expect(report.summary.warnings).toBe(Object.keys(UNSAT).length);
    expect(rows.filter((r) => r.status === 'PASS').length).toBe(mocks[0].model.methods.length - 4);
  });

  it('unsatisfiable results are reported at start by method and pointer, and answered -32603 naming them', async () => {
    for (const [name, pointer] of Object.entries(UNSAT)) {
      const w = mocks[0].warnings.find((x) => x.startsWith(`${name}:`));
      expect(w, name).toMatch(pointer);
      const a = (await answers(urls[0], [name]))[name] as {
        error: { code: number; message: string; data: { pointer: string } };
      };
      expect(a.error.code).toBe(-32603);
      expect(a.error.message).toContain('admits no value');
      expect(a.error.data.pointer).toMatch(pointer);
    }
    expect(mocks[0].warnings).toHaveLength(4);
  });

  it('maps give entries, fixed-length arrays have their length, the same seed answers alike and another seed differs', async () => {
    const names = mocks[0].model.methods.map((m) => m.name).filter((n) => !(n in UNSAT));
    const [a, b, c] = await Promise.all(urls.map((u) => answers(u, names)));
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const r = (x: Record<string, unknown>, n: string) => (x[n] as { result: unknown }).result;
    expect(Object.keys(r(a, 'mapMin') as object).length).toBeGreaterThanOrEqual(2);
    expect(r(a, 'tupleOpen07')).toHaveLength(32);
    expect((r(a, 'tupleOpen07') as unknown[]).every((v) => typeof v === 'number')).toBe(true);
    expect(r(a, 'minItems32')).toHaveLength(32);
    expect(r(a, 'hexPattern')).toMatch(/^0x[0-9a-f]{64}$/);
    // 2020-12 prefixItems: each position its own schema (asserted here: the draft-07 validators ignore the keyword)
    const [hex, n, third, ...more] = r(a, 'prefixItems2020') as unknown[];
    expect(hex).toMatch(/^0x[0-9a-f]{4}$/);
    expect(Number.isInteger(n) && (n as number) >= 7 && (n as number) <= 9, String(n)).toBe(true);
    expect(third).toBe('third');
    expect(more).toEqual([]);
    expect(names.filter((n) => JSON.stringify(r(a, n)) !== JSON.stringify(r(c, n))).length).toBeGreaterThan(10);
  });
});
