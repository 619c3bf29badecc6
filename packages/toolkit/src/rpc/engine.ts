// The generic validating JSON-RPC 2.0 engine: one parse, envelope checks, params mapped and checked by the
// generated (ajv standalone) validators, handler call, optional strict result check, one serialisation per item.
// Generic over a method table (generated/<api>/methods.ts), its validators (generated/<api>/validators.ts) and the
// context type its server builds (CallContext<P>: handlers, the admission hook and the observer see it typed).
//
// Decisions where JSON-RPC 2.0 is silent (tests in test/envelope.test.ts pin each one):
// - Extra members in a request object are ignored.
// - A request that is not valid gets an error even without an `id` (the spec's own examples do this); only a
//   valid request without `id` is a notification. A notification never gets an answer, also when it fails.
// - ids are echoed as JSON.parse gives them and JSON.stringify writes them back: 1.0 → 1, 1e2 → 100, -0 → 0,
//   integers beyond 2^53 lose precision (12345678901234567890 → 12345678901234567000). An id that overflows to
//   ±Infinity (1e400) is refused with -32600 and id null, since it cannot be echoed.
// - A batch answers in request order; its items run concurrently.
// - HTTP status: a single request answers with its error's httpStatus (400 invalid request, 200 for
//   -32601/-32602 and errors the node returned, 500 for unexpected failures and strict result violations,
//   whatever a thrown RpcError carries); a batch answers 200 (headers of per-item errors are dropped);
//   a single notification or a batch of only notifications answers 204 with no body.
// - A handler that returns `undefined` answers `null`. A RawResult is trusted to be valid JSON and is
//   spliced in as is (strict mode parses it to validate it).
// - Params: absent → []. An object for a 'by-position' method, or an array for a 'by-name' method → -32602.
//   By-name: unknown names, missing required names, and an omitted optional param before a given one → -32602.
//   The count is checked against the descriptor before the validator ("expected 1..2 params, got 3").
//   A validator failure names the param by the first segment of ajv's instancePath; for a failed anyOf/oneOf
//   the branch that got deepest is reported, else every branch's reason joined with " or ".
// - Anything that overflows the stack (deep nesting in a recursive validator or in JSON.stringify) becomes a
//   clean error: -32602 for params, -32603 for results. JSON.parse itself is iterative in V8 (tested to 5M).
// - Strings (ids, params, method names) with lone surrogates round-trip: JSON.stringify escapes them (\udXXX).
// - The call observer (`onCall`, metering) sees every call exactly once when its outcome is known, before the
//   response is written: batch items one by one, notifications too, a parse error or an empty/oversized batch as one
//   call without a method; a whole-request refusal by the admission hook once per call that would have run.

import type { IncomingHttpHeaders } from 'node:http';
import type {
  MethodDescriptor,
  MethodTable,
  ParamsByNameOf,
  ParamsOf,
  ResultOf,
  ValidateFn,
  ValidatorTable,
} from './descriptor.js';
import {
  RpcError,
  internalError,
  invalidParams,
  invalidRequest,
  methodNotFound,
  parseError,
  payloadTooLarge,
  resultViolation,
} from './errors.js';

/** What a call runs for. `P` is who it acts for, typed by the server that builds the context (the engine never looks).
 *  A host that needs more per call (rpcgate: the network a request is for) extends this interface and passes its type
 *  as the engine's `C`: the engine carries the context through untouched and knows nothing of what it adds. */
export interface CallContext<P = unknown> {
  principal?: P;
  requestId?: string;
  ip?: string;
  headers?: IncomingHttpHeaders;
  /** performance.now() when the request arrived (for the call observer's latency). */
  startedAt?: number;
}

export interface EngineOptions {
  maxBatchSize: number;
  strictResults: boolean;
  /** Handlers of a method whose paramStructure is "by-name" get one object of named params (keys of omitted optional
   *  params absent), whichever form the client sent; other methods' handlers get the positional array. Default false:
   *  every handler gets the positional array. `createServer` turns it on. */
  namedParams?: boolean;
}

/** body undefined → 204 no content (a notification, or a batch of only notifications). */
export interface EngineResponse {
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/** A result that is already serialised JSON (e.g. the node's bytes): spliced into the response, never re-stringified. */
export class RawResult {
  constructor(readonly json: string) {}
}

export type Handler<D, C extends CallContext = CallContext> = (
  params: ParamsOf<D>,
  ctx: C,
) => Promise<ResultOf<D> | RawResult> | ResultOf<D> | RawResult;
export type Handlers<M extends MethodTable, C extends CallContext = CallContext> = {
  [K in keyof M]?: Handler<M[K], C>;
};

/** The params a handler gets with `namedParams` on: a by-name method's params object (`<Method>ParamsByName` of the
 *  generated descriptor), else the positional tuple. */
export type HandlerParams<D> = '__paramsByName' extends keyof D ? ParamsByNameOf<D> : ParamsOf<D>;
/** A handler with `namedParams` on (createServer's). */
export type NamedHandler<D, C extends CallContext = CallContext> = (
  params: HandlerParams<D>,
  ctx: C,
) => Promise<ResultOf<D> | RawResult> | ResultOf<D> | RawResult;
/** What a handler of an untyped document (no generated descriptor) gets: the positional array, or a by-name method's
 *  object of named params. */
export type UntypedParams = readonly unknown[] | { readonly [name: string]: unknown };
/** Method syntax makes the parameter bivariant, so a handler written for either form (or an engine `Handler`) fits. */
type UntypedHandler<C> = { handle(params: UntypedParams, ctx: C): unknown }['handle'];
export type NamedHandlers<M extends MethodTable, C extends CallContext = CallContext> = {
  [K in keyof M]?: readonly unknown[] extends ParamsOf<M[K]>
    ? UntypedHandler<C>
    : '__paramsByName' extends keyof M[K]
      ? NamedHandler<M[K], C>
      : Handler<M[K], C>;
};

/** A call as the admission hook sees it: valid envelope, known method, params validated (positional). */
export interface AdmitCall {
  readonly method: string;
  readonly params: readonly unknown[];
  /** A notification (no id): refused silently, never answered. */
  readonly notification: boolean;
}

/** What the admission hook decided. */
export interface AdmitResult {
  /** Per call, same index as the calls given: an RpcError refuses that call (its answer), undefined admits it. */
  refused?: ReadonlyArray<RpcError | undefined>;
  /** Refuses the whole request (e.g. 429): answered as one error with its httpStatus and headers, nothing runs. */
  error?: RpcError;
  /** Headers for the response, whatever it turns out to be (e.g. rate-limit headers). */
  headers?: Record<string, string>;
}

/**
 * Admission: called once per request, after the envelope is parsed and each item's params are validated, before any
 * handler runs — with the calls that would run (possibly none: a parse error, an empty batch or a batch of only
 * invalid items still get the hook's headers). Items that failed before it (envelope, unknown method, params) are
 * not in `calls`. A thrown RpcError refuses the whole request; anything else thrown is reported and answered 500.
 */
export type AdmitFn<C extends CallContext = CallContext> = (
  calls: readonly AdmitCall[],
  ctx: C,
) => AdmitResult | undefined | Promise<AdmitResult | undefined>;

/**
 * Where a call ended, for the call observer (metering):
 * - `ok`: answered with a result;
 * - `invalid`: refused by the engine before any hook or handler — parse error, invalid request object, empty or
 *   oversized batch, unknown method, params failing the contract;
 * - `refused`: refused by the admission hook (per call, or the whole request, e.g. 429);
 * - `failed`: the handler threw (the node's own error, an upstream failure, an unexpected error) or the result broke
 *   the contract (strict mode).
 */
export type CallStage = 'ok' | 'invalid' | 'refused' | 'failed';

/**
 * Called once per JSON-RPC call when its outcome is known (batch items one by one; notifications too), before the
 * response is sent. `method` is undefined when the request has none usable (a parse error, an empty or oversized
 * batch: one call). `result` is what the handler returned for an `ok` call (undefined otherwise), so an observer can
 * tell answers apart by their kind (e.g. a cached RawResult subclass) without per-call state. Must be cheap and must
 * not throw (it runs on the hot path).
 */
export type CallObserver<C extends CallContext = CallContext> = (
  method: string | undefined,
  stage: CallStage,
  err: RpcError | undefined,
  ctx: C,
  result?: unknown,
  /** The call's params, for observers that record them: validated for calls that reached their handler or were
   *  refused by the admission hook; as sent (an array or object) for a call refused as an unknown method or for
   *  invalid params; undefined for a malformed request object. */
  params?: unknown,
) => void;

export interface EngineConfig<M extends MethodTable, C extends CallContext = CallContext> {
  methods: M;
  validators: ValidatorTable;
  handlers: Handlers<M, C>;
  options: EngineOptions;
  /** Admission hook (access allowlists per call, quotas); absent = every valid call runs. */
  admit?: AdmitFn<C>;
  /** Called with unexpected errors (a handler threw something that is not an RpcError, a result could not be
   *  serialised, a strict result check failed). Their details never reach the client. */
  onError?: (err: unknown, info: { method: string; ctx: C }) => void;
  /** Turns a known kind of unexpected error (e.g. a database that is down) into a documented error instead of the
   *  internal error; undefined = unexpected (onError, -32603). */
  mapError?: (err: unknown) => RpcError | undefined;
  /** Call observer (metering); absent = nothing observed. */
  onCall?: CallObserver<C>;
}

export interface Engine<C extends CallContext = CallContext> {
  handle(body: string, ctx: C): Promise<EngineResponse>;
  /** The params path alone (lookup, by-name mapping, count, generated validator): null when valid.
   *  Exposed for the validation micro-benchmark and for tools that check a call without making it. */
  validateParams(method: string, params: unknown): RpcError | null;
}

/** A handler as the table stores it: its params were checked by the method's validator before it runs, which is what
 *  makes the typed handler behind this signature safe to call with them. */
type AnyHandler = (params: unknown, ctx: CallContext) => unknown;

/** Everything the engine needs about one method, resolved once at creation. */
interface Entry {
  readonly name: string;
  readonly descriptor: MethodDescriptor;
  readonly handler: AnyHandler | undefined;
  readonly validateParams: ValidateFn | undefined;
  readonly validateResult: ValidateFn | undefined;
  readonly min: number;
  readonly max: number;
  readonly byPosition: boolean;
  readonly byName: boolean;
  /** The handler gets an object of named params (namedParams on and a by-name method). */
  readonly named: boolean;
  /** param name → position, for by-name calls (a Map: no prototype keys). */
  readonly positions: Map<string, number>;
}

/** An error answer: the serialised response plus the error (for a single request's status and headers). */
class Failure {
  constructor(
    readonly body: string,
    readonly error: RpcError,
  ) {}
}

type ItemOutcome = string | Failure | undefined;

/** A call ready to run: what the admission hook sees (AdmitCall) plus what dispatch needs. */
class Prepared implements AdmitCall {
  constructor(
    readonly entry: Entry,
    readonly method: string,
    readonly params: unknown[],
    readonly idJson: string,
    readonly notification: boolean,
  ) {}
}

const NULL_ID = 'null';

/** The positional params (validated) as one object keyed by the descriptor's names; omitted optional params are absent.
 *  Keys are defined, not assigned: a param named __proto__ is a key like any other. */
function namedOf(e: Entry, params: readonly unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const names = e.descriptor.params;
  for (let i = 0; i < params.length; i++)
    if (params[i] !== undefined)
      Object.defineProperty(out, names[i].name, {
        value: params[i],
        enumerable: true,
        writable: true,
        configurable: true,
      });
  return out;
}

/** Serialise an error response. `idJson` is the id already as JSON. Never throws. */
function errorBody(idJson: string, err: RpcError): string {
  let obj: string;
  try {
    obj = JSON.stringify({ code: err.code, message: err.message, data: err.data });
  } catch {
    // data that cannot be serialised (BigInt, cycles, depth) is dropped rather than failing the response
    obj = JSON.stringify({ code: err.code, message: err.message });
  }
  return `{"jsonrpc":"2.0","id":${idJson},"error":${obj}}`;
}

/** A whole-request error response (parse error, empty or oversized batch, or a server-level rejection such as
 *  a missing key or an oversized body), as the server sends it before or instead of the engine. */
export function errorResponse(err: RpcError, id: string | number | null = null): EngineResponse {
  const res: EngineResponse = { status: err.httpStatus, body: errorBody(idJsonOf(id), err) };
  if (err.headers !== undefined) res.headers = err.headers;
  return res;
}

/**
 * A whole-request refusal that names the request's ids, from the request body as far as it was read (a string or
 * bytes; undefined = not read): a single request gets its id; a batch gets an array with one error per item (an
 * item without an `id` member — a notification — gets none; an item that is no object gets id null); a body that
 * does not parse, or names no id at all (only notifications), gets the plain envelope with id null. The HTTP
 * status and headers are the error's either way. For refusals before the engine (a wrong key, a body too large, …),
 * so a client can match the answer to its call.
 */
export function refusalResponse(err: RpcError, body: string | Buffer | undefined): EngineResponse {
  const msg = parseQuietly(body);
  if (msg === undefined) return errorResponse(err);
  if (!Array.isArray(msg))
    return msg !== null && typeof msg === 'object' && 'id' in msg ? errorResponse(err, idOf(msg)) : errorResponse(err);
  return batchRefusal(err, msg);
}

/** A whole batch refused: the error once per item that has an id; the plain envelope when none has. */
function batchRefusal(err: RpcError, items: readonly unknown[]): EngineResponse {
  const out: string[] = [];
  for (const it of items) {
    if (it === null || typeof it !== 'object' || Array.isArray(it)) out.push(errorBody(NULL_ID, err));
    else if ('id' in it) out.push(errorBody(idJsonOf(idOf(it)), err));
  }
  if (out.length === 0) return errorResponse(err);
  const res: EngineResponse = { status: err.httpStatus, body: `[${out.join(',')}]` };
  if (err.headers !== undefined) res.headers = err.headers;
  return res;
}

function parseQuietly(body: string | Buffer | undefined): unknown {
  if (body === undefined || body.length === 0) return undefined;
  try {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    return JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch {
    return undefined;
  }
}

function idJsonOf(id: string | number | null): string {
  return typeof id === 'string'
    ? JSON.stringify(id)
    : typeof id === 'number' && Number.isFinite(id)
      ? String(id)
      : NULL_ID;
}

/** "expected 2 params" / "expected 1..3 params". */
function expected(min: number, max: number): string {
  return min === max ? `expected ${max} param${max === 1 ? '' : 's'}` : `expected ${min}..${max} params`;
}

type AjvError = NonNullable<ValidateFn['errors']>[number];

/** A short reason from an ajv error: its message, with the offending value/property where ajv keeps it aside. */
function reasonOf(err: AjvError | undefined): string {
  if (err === undefined) return 'is invalid';
  const message = err.message ?? `must pass "${err.keyword}"`;
  const p = err.params;
  if (err.keyword === 'additionalProperties' && typeof p.additionalProperty === 'string') {
    return `${message}: ${JSON.stringify(p.additionalProperty)}`;
  }
  if (err.keyword === 'enum' && Array.isArray(p.allowedValues)) {
    return `${message}: ${JSON.stringify(p.allowedValues)}`;
  }
  return message;
}

function unescapePointer(s: string): string {
  return s.indexOf('~') === -1 ? s : s.replace(/~1/g, '/').replace(/~0/g, '~');
}

const COMPOSITE = new Set(['anyOf', 'oneOf']);

/** Where and why a value failed, from ajv's errors (allErrors off: the last error is the keyword that failed,
 *  any before it come from the branches of that anyOf/oneOf). For a failed anyOf/oneOf: a branch that got
 *  deeper into the value is the one the caller meant, so report its error; otherwise list what each branch
 *  wanted ("must match pattern … or must be equal to one of the allowed values: […]"). */
function describeFailure(errors: ValidateFn['errors']): { path: string; reason: string; schemaPath?: string } {
  if (errors == null || errors.length === 0) return { path: '', reason: 'is invalid' };
  const last = errors[errors.length - 1];
  if (!COMPOSITE.has(last.keyword) || errors.length === 1)
    return { path: errors[0].instancePath, reason: reasonOf(errors[0]), schemaPath: errors[0].schemaPath };
  const at = last.instancePath;
  let deepest: AjvError | undefined;
  for (const e of errors) {
    if (COMPOSITE.has(e.keyword) || e.instancePath.length <= at.length) continue;
    if (deepest === undefined || e.instancePath.length > deepest.instancePath.length) deepest = e;
  }
  if (deepest !== undefined)
    return { path: deepest.instancePath, reason: reasonOf(deepest), schemaPath: deepest.schemaPath };
  const reasons: string[] = [];
  for (const e of errors) {
    if (COMPOSITE.has(e.keyword) || e.instancePath !== at) continue;
    const r = reasonOf(e);
    if (!reasons.includes(r)) reasons.push(r);
  }
  return {
    path: at,
    reason: reasons.length === 0 ? reasonOf(last) : reasons.join(' or '),
    schemaPath: last.schemaPath,
  };
}

function isStackOverflow(e: unknown): boolean {
  return e instanceof RangeError;
}

export function createEngine<M extends MethodTable, C extends CallContext = CallContext>(
  cfg: EngineConfig<M, C>,
): Engine<C> {
  const { maxBatchSize, strictResults } = cfg.options;
  const onError = cfg.onError;
  const mapError = cfg.mapError;
  const admit = cfg.admit;
  const observer = cfg.onCall;
  const handlers = cfg.handlers as unknown as Record<string, AnyHandler | undefined>;
  const table = new Map<string, Entry>();

  for (const name of Object.keys(cfg.methods)) {
    const d = cfg.methods[name] as MethodDescriptor;
    const handler = Object.hasOwn(handlers, name) ? handlers[name] : undefined;
    const v = Object.hasOwn(cfg.validators, name) ? cfg.validators[name] : undefined;
    if (handler !== undefined && typeof handler !== 'function')
      throw new TypeError(`handler for ${name} is not a function`);
    if (handler !== undefined && v === undefined) throw new Error(`no validators for ${name}: regenerate generated/`);
    let min = 0;
    const positions = new Map<string, number>();
    d.params.forEach((p, i) => {
      if (p.required) min = i + 1;
      positions.set(p.name, i);
    });
    table.set(name, {
      name,
      descriptor: d,
      handler,
      validateParams: v?.params,
      validateResult: v?.result,
      min,
      max: d.params.length,
      byPosition: d.paramStructure !== 'by-name',
      byName: d.paramStructure !== 'by-position',
      named: cfg.options.namedParams === true && d.paramStructure === 'by-name',
      positions,
    });
  }
  for (const name of Object.keys(handlers)) {
    if (!table.has(name) && handlers[name] !== undefined)
      throw new Error(`handler for ${name}, which is not in the method table`);
  }

  function report(err: unknown, method: string, ctx: C): void {
    if (onError === undefined) return;
    try {
      onError(err, { method, ctx });
    } catch {
      // a failing logger must not fail the request
    }
  }

  function observe(
    method: string | undefined,
    stage: CallStage,
    err: RpcError | undefined,
    ctx: C,
    result?: unknown,
    params?: unknown,
  ): void {
    try {
      observer!(method, stage, err, ctx, result, params);
    } catch (e) {
      report(e, method ?? '(observer)', ctx);
    }
  }

  /** An item the engine refuses itself (observed as `invalid`); undefined for a notification (never answered). */
  function invalid(
    method: string | undefined,
    idJson: string,
    err: RpcError,
    notification: boolean,
    ctx: C,
    params?: unknown,
  ): Failure | undefined {
    if (observer !== undefined) observe(method, 'invalid', err, ctx, undefined, params);
    return notification ? undefined : new Failure(errorBody(idJson, err), err);
  }

  /** Map by-name params onto the positional array by the descriptor's names. */
  function byName(e: Entry, obj: Record<string, unknown>): unknown[] | RpcError {
    const out: unknown[] = [];
    let len = 0;
    for (const key of Object.keys(obj)) {
      const i = e.positions.get(key);
      if (i === undefined) {
        const shown = key.length > 64 ? `${key.slice(0, 64)}…` : key;
        return invalidParams(`unknown param ${JSON.stringify(shown)}`, { param: shown, reason: 'unknown param' });
      }
      out[i] = obj[key];
      if (i >= len) len = i + 1;
    }
    const upto = Math.max(len, e.min);
    for (let i = 0; i < upto; i++) {
      // JSON has no undefined: undefined here means the name was not given.
      if (out[i] === undefined) {
        const p = e.descriptor.params[i];
        const reason = p.required ? 'required param is missing' : 'must be given when a later param is given';
        return invalidParams(`${p.name} ${reason}`, { param: p.name, path: `/${i}`, reason });
      }
    }
    return out;
  }

  /** Params as the handler gets them (a positional array), or the -32602 error. */
  function prepare(e: Entry, raw: unknown): unknown[] | RpcError {
    let arr: unknown[];
    if (raw === undefined) {
      arr = [];
    } else if (Array.isArray(raw)) {
      if (!e.byPosition)
        return invalidParams(`${e.name} takes params by name (an object)`, { reason: 'params must be an object' });
      arr = raw;
    } else {
      if (!e.byName)
        return invalidParams(`${e.name} takes params by position (an array)`, { reason: 'params must be an array' });
      const mapped = byName(e, raw as Record<string, unknown>);
      if (mapped instanceof RpcError) return mapped;
      arr = mapped;
    }
    const n = arr.length;
    if (n < e.min || n > e.max) {
      const reason = `${expected(e.min, e.max)}, got ${n}`;
      return invalidParams(
        reason,
        n < e.min
          ? { param: e.descriptor.params[n].name, reason, min: e.min, max: e.max, got: n }
          : { reason, min: e.min, max: e.max, got: n },
      );
    }
    const validate = e.validateParams;
    if (validate === undefined) return arr;
    let ok: boolean;
    try {
      ok = validate(arr);
    } catch (err) {
      if (!isStackOverflow(err)) throw err;
      return invalidParams('params are nested too deeply to validate', { reason: 'nested too deeply' });
    }
    if (ok) return arr;
    const { path, reason } = describeFailure(validate.errors);
    // instancePath "/1/fromBlock": segment 1 is the position, the rest is inside that param
    const slash = path.indexOf('/', 1);
    const head = slash === -1 ? path.slice(1) : path.slice(1, slash);
    const param = head === '' ? undefined : e.descriptor.params[Number(head)]?.name;
    if (param === undefined) return invalidParams(reason, { path, reason });
    const label = slash === -1 ? param : param + unescapePointer(path.slice(slash));
    return invalidParams(`${label} ${reason}`, { param, path, reason });
  }

  /** Strict mode: the result against the contract; undefined when it conforms. */
  function checkResult(e: Entry, value: unknown): RpcError | undefined {
    const validate = e.validateResult;
    if (validate === undefined) return undefined;
    let data = value;
    if (value instanceof RawResult) {
      try {
        data = JSON.parse(value.json);
      } catch {
        return resultViolation('', 'raw result is not valid JSON');
      }
    }
    try {
      if (validate(data)) return undefined;
    } catch (err) {
      if (!isStackOverflow(err)) throw err;
      return resultViolation('', 'nested too deeply to validate');
    }
    const { path, reason, schemaPath } = describeFailure(validate.errors);
    return resultViolation(path, reason, schemaPath);
  }

  function unexpected(err: unknown, method: string, ctx: C): RpcError {
    if (err instanceof RpcError) return err;
    const known = mapError?.(err);
    if (known !== undefined) return known;
    report(err, method, ctx);
    return internalError();
  }

  /** One request object → a call ready to run, or its final outcome (error answer / undefined for a notification).
   *  Every outcome other than a Prepared call has been observed here. */
  function prepareItem(item: unknown, ctx: C): Prepared | ItemOutcome {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      return invalid(undefined, NULL_ID, NOT_AN_OBJECT, false, ctx);
    const req = item as Record<string, unknown>;
    const id = req.id;
    const method = req.method;
    const named = typeof method === 'string' ? method : undefined;
    let idJson: string;
    if (id === undefined) idJson = NULL_ID;
    else if (typeof id === 'number') {
      if (!Number.isFinite(id)) return invalid(named, NULL_ID, ID_NOT_FINITE, false, ctx);
      idJson = String(id); // same text as JSON.stringify for finite numbers
    } else if (typeof id === 'string') idJson = JSON.stringify(id);
    else if (id === null) idJson = NULL_ID;
    else return invalid(named, NULL_ID, BAD_ID, false, ctx);

    if (req.jsonrpc !== '2.0') return invalid(named, idJson, BAD_VERSION, false, ctx);
    if (named === undefined)
      return invalid(undefined, idJson, method === undefined ? NO_METHOD : BAD_METHOD, false, ctx);
    const raw = req.params;
    if (raw !== undefined && (typeof raw !== 'object' || raw === null))
      return invalid(named, idJson, BAD_PARAMS, false, ctx);

    // A valid request from here on: without an id it is a notification and gets no answer whatever happens.
    const notification = id === undefined;
    try {
      const e = table.get(named);
      if (e === undefined || e.handler === undefined)
        return invalid(named, idJson, methodNotFound(named, e === undefined), notification, ctx, raw);
      const params = prepare(e, raw);
      if (params instanceof RpcError) return invalid(named, idJson, params, notification, ctx, raw);
      return new Prepared(e, named, params, idJson, notification);
    } catch (thrown) {
      // a validator failing in an unexpected way
      const err = unexpected(thrown, named, ctx);
      if (observer !== undefined) observe(named, 'failed', err, ctx);
      return notification ? undefined : new Failure(errorBody(idJson, err), err);
    }
  }

  /** Runs a prepared call: handler, strict result check, one serialisation; observed once. Never rejects. */
  async function dispatch(p: Prepared, ctx: C): Promise<ItemOutcome> {
    const { entry: e, method, idJson, notification } = p;
    try {
      let value: unknown;
      try {
        value = await e.handler!(e.named ? namedOf(e, p.params) : p.params, ctx);
      } catch (thrown) {
        const err = unexpected(thrown, method, ctx);
        if (observer !== undefined) observe(method, 'failed', err, ctx, undefined, p.params);
        return notification ? undefined : new Failure(errorBody(idJson, err), err);
      }
      if (notification) {
        if (observer !== undefined) observe(method, 'ok', undefined, ctx, value, p.params);
        return undefined;
      }
      if (value === undefined) value = null;

      if (strictResults) {
        const violation = checkResult(e, value);
        if (violation !== undefined) {
          report(violation, method, ctx);
          if (observer !== undefined) observe(method, 'failed', violation, ctx, undefined, p.params);
          return new Failure(errorBody(idJson, violation), violation);
        }
      }
      // RawResult: the node's bytes go out as they came; anything else is serialised exactly once.
      const json = value instanceof RawResult ? value.json : JSON.stringify(value);
      if (observer !== undefined) observe(method, 'ok', undefined, ctx, value, p.params);
      return `{"jsonrpc":"2.0","id":${idJson},"result":${json}}`;
    } catch (thrown) {
      // serialisation (BigInt, cycles, depth)
      const err = unexpected(thrown, method, ctx);
      if (observer !== undefined) observe(method, 'failed', err, ctx, undefined, p.params);
      return notification ? undefined : new Failure(errorBody(idJson, err), err);
    }
  }

  /** The admission hook's answer (undefined without a hook), with anything unexpected turned into a whole-request
   *  error. A hook that answers synchronously is answered synchronously (no Promise on the hot path); a Promise is
   *  passed on. */
  function runAdmit(calls: readonly AdmitCall[], ctx: C): AdmitResult | undefined | Promise<AdmitResult | undefined> {
    if (admit === undefined) return undefined;
    let r: AdmitResult | undefined | Promise<AdmitResult | undefined>;
    try {
      r = admit(calls, ctx);
    } catch (thrown) {
      return admitFailed(thrown, calls, ctx);
    }
    // Any thenable (as `await` would take it), normalised to a Promise the callers recognise.
    if (r !== undefined && typeof (r as { then?: unknown }).then === 'function') {
      return Promise.resolve(r).catch((thrown: unknown) => admitFailed(thrown, calls, ctx));
    }
    return r as AdmitResult | undefined;
  }

  function admitFailed(thrown: unknown, calls: readonly AdmitCall[], ctx: C): AdmitResult {
    return { error: unexpected(thrown, calls.length === 1 ? calls[0].method : '(admission)', ctx) };
  }

  /** A refused call's outcome (notifications stay silent). */
  function refusal(p: Prepared, err: RpcError, ctx: C): ItemOutcome {
    if (observer !== undefined) observe(p.method, 'refused', err, ctx, undefined, p.params);
    return p.notification ? undefined : new Failure(errorBody(p.idJson, err), err);
  }

  /** The answer to a single request object. */
  function single(out: ItemOutcome): EngineResponse {
    if (out === undefined) return { status: 204 };
    if (typeof out === 'string') return { status: 200, body: out };
    const res: EngineResponse = { status: out.error.httpStatus, body: out.body };
    if (out.error.headers !== undefined) res.headers = out.error.headers;
    return res;
  }

  /** The answer to a batch: items in request order, notifications left out; 204 when nothing is left. */
  function joinBatch(outs: readonly ItemOutcome[]): EngineResponse {
    let joined = '';
    for (let i = 0; i < outs.length; i++) {
      const o = outs[i];
      if (o === undefined) continue;
      const s = typeof o === 'string' ? o : o.body;
      joined = joined === '' ? s : `${joined},${s}`;
    }
    if (joined === '') return { status: 204 };
    return { status: 200, body: `[${joined}]` };
  }

  /** Adds the hook's headers to a response (the response's own, e.g. Retry-After, win on a clash). */
  function withHeaders(res: EngineResponse, h: Record<string, string> | undefined): EngineResponse {
    if (h === undefined) return res;
    res.headers = res.headers === undefined ? h : { ...h, ...res.headers };
    return res;
  }

  /**
   * The one dispatch path, for a single request and for every batch item alike: prepare each item (envelope, method,
   * params), admit the prepared calls once (no hook: all admitted), run what was admitted.
   */
  async function handle(body: string, ctx: C): Promise<EngineResponse> {
    let msg: unknown;
    try {
      // RFC 8259 lets a parser ignore a byte order mark
      msg = JSON.parse(body.charCodeAt(0) === 0xfeff ? body.slice(1) : body);
    } catch (err) {
      const pe = parseError(err instanceof Error ? err.message : undefined);
      if (observer !== undefined) observe(undefined, 'invalid', pe, ctx);
      return withHeaders(errorResponse(pe), (await runAdmit(NO_CALLS, ctx))?.headers);
    }
    if (!Array.isArray(msg)) {
      const p = prepareItem(msg, ctx);
      const calls = admit !== undefined && p instanceof Prepared ? [p] : NO_CALLS;
      let r = runAdmit(calls, ctx);
      if (r instanceof Promise) r = await r;
      if (!(p instanceof Prepared)) return withHeaders(single(p), r?.headers);
      if (r?.error !== undefined) {
        if (observer !== undefined) observe(p.method, 'refused', r.error, ctx, undefined, p.params);
        return withHeaders(errorResponse(r.error, idOf(msg)), r.headers);
      }
      const refused = r?.refused?.[0];
      return withHeaders(single(refused !== undefined ? refusal(p, refused, ctx) : await dispatch(p, ctx)), r?.headers);
    }
    const n = msg.length;
    if (n === 0 || n > maxBatchSize) {
      const r = await runAdmit(NO_CALLS, ctx);
      return withHeaders(errorResponse(batchRefused(n, ctx)), r?.headers);
    }
    const outs = new Array<ItemOutcome | Promise<ItemOutcome>>(n);
    const calls: Prepared[] = [];
    const at: number[] = [];
    for (let i = 0; i < n; i++) {
      const p = prepareItem(msg[i], ctx);
      if (p instanceof Prepared) {
        calls.push(p);
        at.push(i);
      } else outs[i] = p;
    }
    let r = runAdmit(calls, ctx);
    if (r instanceof Promise) r = await r;
    if (r?.error !== undefined) {
      // The whole request is refused: every call that would have run is (items refused before are already observed).
      if (observer !== undefined)
        for (const p of calls) observe(p.method, 'refused', r.error, ctx, undefined, p.params);
      return withHeaders(batchRefusal(r.error, msg), r.headers);
    }
    const refused = r?.refused;
    for (let j = 0; j < calls.length; j++) {
      const err = refused?.[j];
      outs[at[j]] = err !== undefined ? refusal(calls[j], err, ctx) : dispatch(calls[j], ctx);
    }
    return withHeaders(joinBatch(await Promise.all(outs)), r?.headers);
  }

  /** An empty or oversized batch: one invalid call (its items are not looked at). */
  function batchRefused(n: number, ctx: C): RpcError {
    const err = n === 0 ? EMPTY_BATCH : payloadTooLarge('batch', maxBatchSize, n);
    if (observer !== undefined) observe(undefined, 'invalid', err, ctx);
    return err;
  }

  function validateParams(method: string, params: unknown): RpcError | null {
    const e = table.get(method);
    if (e === undefined) return methodNotFound(method);
    const r = prepare(e, params);
    return r instanceof RpcError ? r : null;
  }

  return { handle, validateParams };
}

// Envelope errors carry no per-request detail: built once.
const NOT_AN_OBJECT = invalidRequest('not a request object');
const BAD_ID = invalidRequest('id must be a string, a number or null');
const ID_NOT_FINITE = invalidRequest('id must be a finite number');
const BAD_VERSION = invalidRequest('jsonrpc must be "2.0"');
const NO_METHOD = invalidRequest('method is missing');
const BAD_METHOD = invalidRequest('method must be a string');
const BAD_PARAMS = invalidRequest('params must be an array or an object');
const EMPTY_BATCH = invalidRequest('empty batch');
const NO_CALLS: readonly AdmitCall[] = [];

/** The id of a single request object, for a whole-request refusal (null when it has none usable). */
function idOf(msg: unknown): string | number | null {
  const id = (msg as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
