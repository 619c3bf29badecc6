// A mock server for any OpenRPC document: `createServer` (the validating engine and transport: envelope, batch,
// notifications, params by position and by name with -32602 naming the failing path, rpc.discover) with a handler per
// method generated from the document.
//
// What a call answers, decided once at start (nothing is generated per request; the same call always gets the same
// answer, and two mocks with the same seed answer alike):
// 1. a call whose positional params deep-equal one of the method's example pairings' params answers that example's
//    result — or its error, when the pairing carries an `error` object (code, message, data; inline, as an example
//    object's value, or a $ref);
// 2. any other call answers a value generated from the result schema (sample.ts: json-schema-faker, seeded, checked by
//    the method's own result validator);
// 3. a method for which no such value could be generated answers -32603 saying so — also when its result schema
//    demands more than the generator's bounds (contract/sample-bounds.ts: e.g. minItems above 1000; the error names
//    the keyword and JSON pointer) or one value's generation spends its node or time budget.
// Examples that break the document's own schemas are reported as warnings at start, never served: params that fail
// are refused by the engine like any call (-32602), a result that fails is replaced by the generated value, so the
// mock answers nothing its document forbids (results stay checked, strictResults on).
import { isDeepStrictEqual } from 'node:util';
import { resolve, type ContractModel, type ExampleModel, type Json, type MethodModel } from '../contract/model.js';
import { sampleResult } from '../contract/sample.js';
import type { DocumentLimits } from '../contract/bounds.js';
import { ErrorCode, RpcError } from '../rpc/errors.js';
import type { Handler } from '../rpc/engine.js';
import type { ValidateFn } from '../rpc/descriptor.js';
import {
  createServer,
  resolveDocument,
  type DocumentSource,
  type RpcServer,
  type ServerOptions,
} from '../server/index.js';

export interface MockOptions extends Pick<ServerOptions, 'maxBatchSize' | 'maxBodyBytes' | 'path' | 'onError'> {
  /** A path or http(s) URL, the parsed document, or a model already loaded. */
  document: DocumentSource;
  /** Seed of the generated values (default 1): the same seed gives the same answers. */
  seed?: number;
  /** Limits on dereferencing the document (contract/bounds.ts). */
  limits?: DocumentLimits;
}

export interface MockServer extends RpcServer {
  readonly model: ContractModel;
  /** What the mock could not serve as the document says (one line each, prefixed with the method name). */
  readonly warnings: readonly string[];
}

/** An example pairing's answer. */
type Answer = { result: unknown } | { error: RpcError };

interface Pairing {
  params: unknown[];
  answer: Answer;
}

/** The example's params as the positional array the engine hands a handler: by name when every example param is
 *  named after one of the method's params (by-name documents do that), else in order (examples' names are often the
 *  example values' own names, e.g. simple-math's "two"). undefined when a name leaves a gap before a later one. */
function examplePositions(m: MethodModel, x: ExampleModel): unknown[] | undefined {
  const names = new Map(m.params.map((p, i) => [p.name, i]));
  if (x.params.length === 0 || !x.params.every((p) => names.has(p.name))) return x.params.map((p) => p.value);
  const out: unknown[] = [];
  for (const p of x.params) out[names.get(p.name)!] = p.value;
  for (let i = 0; i < out.length; i++) if (!(i in out)) return undefined;
  return out;
}

/** The call a client makes with the example: an object for a by-name method, else the positional array. */
function exampleCall(m: MethodModel, positional: unknown[]): unknown {
  return m.paramStructure === 'by-name'
    ? Object.fromEntries(positional.map((v, i) => [m.params[i].name, v]))
    : positional;
}

/** An example pairing's `error` (not in the OpenRPC meta-schema, which leaves pairings open; some documents use it):
 *  an error object inline, an example object whose value is one, or a $ref to either. */
function exampleError(raw: Json, pairing: Json): RpcError | undefined | string {
  if (pairing?.error === undefined) return undefined;
  let e = resolve(raw, pairing.error);
  if (e && typeof e === 'object' && !('code' in e) && e.value && typeof e.value === 'object') e = e.value;
  if (!e || !Number.isInteger(e.code) || typeof e.message !== 'string')
    return 'its error is not an error object (integer code, string message)';
  return new RpcError(e.code, e.message, e.data);
}

/** Where a value failed: ajv's deepest error (for a failed oneOf, the branch that got furthest into the value). */
function failure(errors: ValidateFn['errors']): string {
  if (!errors?.length) return 'invalid';
  const e = errors.reduce((a, b) => (b.instancePath.length >= a.instancePath.length ? b : a));
  return `${e.instancePath || '/'} ${e.message ?? e.keyword}`;
}

const label = (x: ExampleModel, i: number) => (x.name ? JSON.stringify(x.name) : `#${i + 1}`);

export async function createMock(opts: MockOptions): Promise<MockServer> {
  const model = await resolveDocument(opts.document, undefined, opts.limits);
  const seed = opts.seed ?? 1;
  const warnings: string[] = [];
  const pairings = new Map<string, Pairing[]>();
  const generated = new Map<string, { value: unknown } | undefined>();
  const outOfBounds = new Map<string, string>();

  // The handlers read what is computed below from the compiled contract createServer builds (compiled once).
  const handlers: Record<string, Handler<unknown>> = Object.create(null); // method names are keys: __proto__ too
  for (const m of model.methods) {
    if (m.name === 'rpc.discover') continue; // createServer answers the document itself
    const name = m.name;
    handlers[name] = (params) => {
      const positional = params as unknown as unknown[];
      for (const p of pairings.get(name) ?? []) {
        if (isDeepStrictEqual(p.params, positional)) {
          if ('error' in p.answer) throw p.answer.error;
          return p.answer.result as never;
        }
      }
      const g = generated.get(name);
      const bounds = outOfBounds.get(name);
      if (g === undefined && bounds !== undefined)
        throw new RpcError(
          ErrorCode.InternalError,
          `mock: the result schema of ${name} ${bounds}`,
          { method: name },
          500,
        );
      if (g === undefined)
        throw new RpcError(
          ErrorCode.InternalError,
          `mock: no value of the result schema of ${name} could be generated`,
          { method: name },
          500,
        );
      return g.value as never;
    };
  }

  // The mock matches example params by position: its handlers take the positional array for every method.
  const server = await createServer({ ...opts, document: model, handlers, strictResults: true, namedParams: false });
  const { validators } = server.contract;
  const rawMethods: Json[] = model.raw.methods ?? [];

  for (const [mi, m] of model.methods.entries()) {
    if (handlers[m.name] === undefined) continue;
    const v = validators[m.name];
    let bounds: string | undefined;
    const g =
      m.result === undefined
        ? { value: null }
        : sampleResult(model, m.name, v.result, { seed, onBounds: (why) => (bounds = why) });
    generated.set(m.name, g);
    if (g === undefined && bounds !== undefined) {
      outOfBounds.set(m.name, bounds);
      warnings.push(`${m.name}: its result schema ${bounds}; calls that match no example answer -32603`);
    } else if (g === undefined)
      warnings.push(
        `${m.name}: no value of its result schema could be generated; calls that match no example answer -32603`,
      );

    const rawPairings: Json[] = resolve(model.raw, rawMethods[mi])?.examples ?? [];
    const list: Pairing[] = [];
    for (const [xi, x] of m.examples.entries()) {
      const what = `${m.name}: example ${label(x, xi)}`;
      const params = examplePositions(m, x);
      if (params === undefined) {
        warnings.push(
          `${what}: its params name a later param but leave out an earlier optional one, which a by-name call cannot do here (names map onto positions); not served`,
        );
        continue;
      }
      const refused = server.engine.validateParams(m.name, exampleCall(m, params));
      if (refused)
        warnings.push(
          `${what}: its params do not match the document's schemas (${refused.message}); such calls are refused with -32602`,
        );
      const error = exampleError(model.raw, resolve(model.raw, rawPairings[xi]));
      if (typeof error === 'string') {
        warnings.push(`${what}: ${error}; not served`);
        continue;
      }
      if (error) {
        list.push({ params, answer: { error } });
        continue;
      }
      if (x.result === undefined) continue; // a notification's example: nothing to answer
      if (!v.result(x.result.value)) {
        warnings.push(
          `${what}: its result does not match the result schema (${failure(v.result.errors)}); a generated value is answered instead`,
        );
        continue;
      }
      list.push({ params, answer: { result: x.result.value } });
    }
    if (list.length) pairings.set(m.name, list);
  }
  return Object.assign(server, { model, warnings });
}
