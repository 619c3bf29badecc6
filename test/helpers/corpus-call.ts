// One call per corpus document, chosen the same way by every corpus test (issue 19): the typed usage file of
// toolkit-corpus-compile.test.ts calls it through the generated client, and toolkit-corpus.test.ts serves it with
// createServer and one handler. Chosen from the document, not by hand, so that a new document needs no new code: the
// first method (document order) with at least one param whose params and result the toolkit's sampler can produce
// valid values for, else the first such method without params, else the first method whose params can be produced.
import type { CompiledContract } from '../../packages/toolkit/src/contract/compile.js';
import { sampleParams, sampleResult } from '../../packages/toolkit/src/contract/sample.js';

export interface CorpusCall {
  method: string;
  paramStructure: 'by-position' | 'by-name' | 'either';
  /** Valid positional params (as the generated client takes them). */
  params: unknown[];
  /** What a handler of a by-name method receives: the params by their names. */
  named: Record<string, unknown>;
  /** A valid result, or undefined when the method declares none (a notification-only method). */
  result: { value: unknown } | undefined;
  /** The first param's schema (dereferenced) admits no object and states what it admits (`type` without "object",
   *  `enum` or `const`): its TypeScript type cannot take a symbol (`{}` and `unknown` can). */
  typedFirstParam: boolean;
}

function typed(schema: unknown): boolean {
  if (!schema || typeof schema !== 'object') return false;
  const s = schema as { type?: unknown; enum?: unknown; const?: unknown };
  if (Array.isArray(s.enum) || 'const' in s) return true;
  const types = Array.isArray(s.type) ? s.type : [s.type];
  return types.length > 0 && types.every((t) => typeof t === 'string' && t !== 'object');
}

export function chooseCall(c: CompiledContract): CorpusCall {
  const candidates: CorpusCall[] = [];
  for (const m of c.model.methods) {
    const v = c.validators[m.name];
    if (!v) continue;
    const p = sampleParams(c.model, m.name, v.params, { seed: 1 });
    if (!p) continue;
    const r = m.result ? sampleResult(c.model, m.name, v.result, { seed: 1 }) : undefined;
    if (m.result && !r) continue;
    const named: Record<string, unknown> = {};
    p.value.forEach((value, i) => {
      if (value !== undefined) named[m.params[i].name] = value;
    });
    const call: CorpusCall = {
      method: m.name,
      paramStructure: m.paramStructure,
      params: p.value,
      named,
      result: r,
      typedFirstParam: typed(m.params[0]?.deref),
    };
    if (p.value.length > 0 && r) return call;
    candidates.push(call);
  }
  const best = candidates.find((x) => x.result) ?? candidates[0];
  if (!best) throw new Error(`${c.model.spec.name}: no method whose params the sampler can produce`);
  return best;
}
