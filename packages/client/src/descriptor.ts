// The shapes shared by generated code (generated/<api>/methods.ts, validators.ts) and the generic
// runtime (engine, client). Generated code is data typed with these; behaviour lives in src/.

/** A method object's OpenRPC specification extensions (`x-…` keys), as written in the contract. The toolkit gives them
 *  no meaning: they are data for whoever builds on it. */
export type Extensions = { readonly [key: `x-${string}`]: unknown };

/** One method of a contract, as data. `P`/`R` are phantom types: only the type checker sees them; `X` is the literal
 *  type of the method's extensions. */
export interface MethodDescriptor<
  P extends readonly unknown[] = readonly unknown[],
  R = unknown,
  X extends Extensions = Extensions,
> {
  readonly name: string;
  readonly summary: string;
  /** Positional params in contract order; by-name calls are mapped onto these names. */
  readonly params: readonly { readonly name: string; readonly required: boolean }[];
  /** JSON-RPC error codes the contract lists for the method. */
  readonly errors: readonly number[];
  /** 'by-position' | 'by-name' | 'either' (OpenRPC paramStructure; default 'either'). */
  readonly paramStructure: 'by-position' | 'by-name' | 'either';
  /** The method's specification extensions; absent when it has none. */
  readonly ext?: X;
  /** Phantom: never present at run time. */
  readonly __types?: { readonly params: P; readonly result: R };
}

/** Any contract's methods: a descriptor's phantom types are read-only, so every typed descriptor fits here. */
export type MethodTable = { readonly [method: string]: MethodDescriptor };

export type ParamsOf<D> = D extends MethodDescriptor<infer P, unknown> ? P : never;
export type ResultOf<D> = D extends MethodDescriptor<readonly unknown[], infer R> ? R : never;

/** An ajv (standalone) validate function. */
export interface ValidateFn {
  (data: unknown): boolean;
  errors?: null | ReadonlyArray<{
    instancePath: string;
    schemaPath: string;
    keyword: string;
    params: Record<string, unknown>;
    message?: string;
  }>;
}

/** Generated per contract: validators for each method's params (the positional array) and result. */
export type ValidatorTable = {
  readonly [method: string]: { readonly params: ValidateFn; readonly result: ValidateFn };
};
