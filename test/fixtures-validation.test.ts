// The execution-apis conformance fixtures against the GENERATED validators (generated/node/validators.ts):
// every recorded request for a method of the contract passes its params validator, except the ones the
// fixture records as refused (an error response whose file name says "error"/"invalid"): those must either be
// refused by the validator or be errors the node decides (semantics a schema cannot see, e.g. a reversed block
// range); every recorded non-error result passes the method's result validator.
import { describe, expect, it } from 'vitest';
import { methods } from '../generated/node/methods.js';
import { validators } from '../generated/node/validators.js';
import { readRecordedExchanges, type RecordedExchange } from './helpers/execution-apis.js';

type Exchange = RecordedExchange;

const all: Exchange[] = readRecordedExchanges();
const known = all.filter((x) => Object.hasOwn(methods, x.request.method));
const refusedByName = (x: Exchange) => /error|invalid/i.test(x.file);
const show = (f: { errors?: unknown }) => JSON.stringify(f.errors);

describe('execution-apis fixtures vs generated validators', () => {
  it('cover the contract: fixtures exist for most methods', () => {
    const covered = new Set(known.map((x) => x.request.method));
    console.log(`fixtures: ${all.length} exchanges in total, ${known.length} for ${covered.size} contract methods`);
    expect(covered.size).toBeGreaterThanOrEqual(20);
  });

  it('every request passes the params validator (the refused ones: refused or a node-decided error)', () => {
    const problems: string[] = [];
    let accepted = 0;
    let refused = 0;
    let nodeDecided = 0;
    for (const x of known) {
      const v = validators[x.request.method].params;
      const ok = v(x.request.params ?? []);
      if (refusedByName(x) && x.response.error) {
        if (ok) nodeDecided++;
        else refused++;
        // Either way the exchange answered an error: nothing else to check.
      } else if (ok) {
        accepted++;
      } else {
        problems.push(`${x.file}: ${JSON.stringify(x.request.params)} → ${show(v)}`);
      }
    }
    console.log(
      `params: ${accepted} accepted, ${refused} refused by the validator, ${nodeDecided} refused by the node only (schema-valid)`,
    );
    expect(problems).toEqual([]);
    expect(accepted).toBeGreaterThan(50);
  });

  it('the fixtures that send malformed params are refused by the validator', () => {
    // These two send a storage key that is not a ≤32-byte hex quantity: a schema matter, not the node's.
    const malformed = known.filter((x) => /invalid-key/.test(x.file));
    expect(malformed.length).toBe(2);
    for (const x of malformed) expect(validators[x.request.method].params(x.request.params), x.file).toBe(false);
  });

  it('every recorded result passes the result validator', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const x of known) {
      if (!('result' in x.response)) continue;
      const v = validators[x.request.method].result;
      if (v(x.response.result)) checked++;
      else problems.push(`${x.file}: ${show(v)}`);
    }
    console.log(`results: ${checked} recorded results validate`);
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(50);
  });

  it('the validators can fail: a recorded result with a broken field is refused', () => {
    const x = known.find(
      (e) => e.request.method === 'eth_getBlockByNumber' && e.response.result && typeof e.response.result === 'object',
    )!;
    const broken = { ...(x.response.result as Record<string, unknown>), number: '0x0123' }; // leading zero
    expect(validators.eth_getBlockByNumber.result(broken)).toBe(false);
  });
});
