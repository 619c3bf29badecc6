// Handlers that make a server out of an OpenRPC document alone, for conformance tests: a call whose params match one of
// the method's example pairings answers that pairing's result (or throws its error); any other call answers a
// deterministic value generated from the result schema. A pairing's result that fails the document's own result schema
// (real documents have some) is replaced by a generated one: the server must be conformant, not a copy of the mistake.
import { isDeepStrictEqual } from 'node:util';
import type { CompiledContract } from '../../packages/toolkit/src/contract/compile.js';
import { pairingParams, resolve } from '../../packages/toolkit/src/contract/model.js';
import { sampleResult } from '../../packages/toolkit/src/contract/sample.js';
import type { Handler } from '../../packages/toolkit/src/rpc/engine.js';
import { RpcError, internalError } from '../../packages/toolkit/src/rpc/errors.js';

/** JSON equality (the engine's params went through JSON: trailing omitted optionals are simply absent). */
const sameJson = (a: unknown, b: unknown) =>
  isDeepStrictEqual(JSON.parse(JSON.stringify(a)), JSON.parse(JSON.stringify(b)));

export interface ExampleHandlerOptions {
  /** Replace a method's answer (e.g. a deliberately wrong shape); gets what the handler would have answered. */
  override?: Record<string, (answer: unknown, params: readonly unknown[]) => unknown>;
}

/** A handler for every method of the document except rpc.discover (createServer answers that with the document). */
export function exampleHandlers(
  c: CompiledContract,
  opts: ExampleHandlerOptions = {},
): Record<string, Handler<unknown>> {
  const handlers: Record<string, Handler<unknown>> = {};
  c.model.methods.forEach((m, i) => {
    if (m.name === 'rpc.discover') return;
    const validate = c.validators[m.name].result;
    const rawMethod = resolve(c.model.raw, c.model.raw.methods[i]);
    const pairings = m.examples.map((x, j) => {
      const rawExample = resolve(c.model.raw, rawMethod.examples[j]);
      const err = rawExample.error === undefined ? undefined : resolve(c.model.raw, rawExample.error);
      const error = err === undefined ? undefined : (resolve(c.model.raw, err.value) ?? err);
      return {
        params: pairingParams(m, x),
        result: x.result?.value,
        error: error as { code: number; message: string; data?: unknown } | undefined,
      };
    });
    let generated: { value: unknown } | undefined;
    const fallback = () => {
      generated ??= sampleResult(c.model, m.name, validate);
      if (!generated) throw internalError({ reason: `no value generated for ${m.name}'s result` });
      return generated.value;
    };
    handlers[m.name] = (params) => {
      const hit = pairings.find((p) => sameJson(p.params, params));
      if (hit?.error) throw new RpcError(hit.error.code, hit.error.message, hit.error.data);
      const answer = hit && hit.result !== undefined && validate(hit.result) ? hit.result : fallback();
      const override = opts.override?.[m.name];
      return (override ? override(answer, params as readonly unknown[]) : answer) as never;
    };
  });
  return handlers;
}
