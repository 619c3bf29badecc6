// Why did a result fail? The generated validators run with allErrors off (hot-path safe), so for a schema like
// `anyOf: [Receipt, null]` they can only say "must be null". Conformance is not a hot path: on a failure only,
// the method's result schema is compiled from the contract with allErrors on, and the deepest errors are shown.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';

const DOC_ID = 'urn:rpcgate:conformance:contract';

export class ResultExplainer {
  private ajv?: Ajv;
  private readonly compiled = new Map<string, ValidateFunction | null>();

  constructor(
    private readonly document: { methods: { name: string; result?: unknown }[]; components?: unknown },
    /** Said when this schema accepts a result the contract's validator refused (they should agree). */
    private readonly disagreement = 'the contract schema itself accepts this result: generated/ may be stale (npm run generate)',
  ) {}

  private deref(v: unknown): unknown {
    for (
      let i = 0;
      i < 16 && typeof v === 'object' && v !== null && typeof (v as { $ref?: unknown }).$ref === 'string';
      i++
    ) {
      const ref = (v as { $ref: string }).$ref;
      if (!ref.startsWith('#/')) return v;
      v = ref
        .slice(2)
        .split('/')
        .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], this.document);
    }
    return v;
  }

  private validator(method: string): ValidateFunction | null {
    if (this.compiled.has(method)) return this.compiled.get(method)!;
    let fn: ValidateFunction | null = null;
    try {
      if (!this.ajv) {
        this.ajv = new Ajv({ allErrors: true, strict: false, validateFormats: false });
        this.ajv.addSchema({ $id: DOC_ID, components: this.document.components ?? {} });
      }
      const m = this.document.methods.find((x) => x.name === method);
      const result = this.deref(m?.result) as { schema?: unknown } | undefined;
      if (result?.schema !== undefined) {
        // The method's schema sits outside `components`: point its local refs at the registered document.
        const schema = JSON.parse(JSON.stringify(result.schema).replaceAll('"#/', `"${DOC_ID}#/`)) as object;
        fn = this.ajv.compile(schema);
      }
    } catch {
      fn = null;
    }
    this.compiled.set(method, fn);
    return fn;
  }

  /** A short explanation, or undefined when the contract schema cannot be compiled here. */
  explain(method: string, result: unknown): string | undefined {
    const fn = this.validator(method);
    if (!fn) return undefined;
    if (fn(result)) return this.disagreement;
    return deepest(fn.errors ?? []);
  }
}

function deepest(errors: ErrorObject[]): string {
  const specific = errors.filter((e) => !['anyOf', 'oneOf', 'if', 'not'].includes(e.keyword));
  const pool = specific.length ? specific : errors;
  const depth = (e: ErrorObject) => e.instancePath.split('/').length;
  const max = Math.max(...pool.map(depth));
  const top = pool.filter((e) => depth(e) === max);
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const e of top) {
    const extra =
      e.keyword === 'additionalProperties'
        ? ` (${String((e.params as { additionalProperty?: string }).additionalProperty)})`
        : '';
    // The schema path says which part of the contract refused it (refs shown as the document names them).
    const line = `${e.instancePath || '(root)'} ${e.message ?? e.keyword}${extra} (schema ${e.schemaPath.replace(`${DOC_ID}#`, '#')})`;
    if (!seen.has(line)) lines.push(line), seen.add(line);
    if (lines.length === 3) break;
  }
  return lines.join('; ');
}
