// Checks a (bundled) document against the OpenRPC meta-schema of its version, leniently (issue 19 item 8): what breaks
// the meta-schema without stopping anyone from reading the document — a loose version string (`1.4.x`), a relative
// server URL before 1.4 allowed it, a method without the `result` versions before 1.3 require, a property the
// specification does not define — is a warning naming its JSON pointer; everything else is an error naming it.
// The meta-schemas are @open-rpc/schema-utils-js's (1.3 for 1.0.0-rc0 … 1.3.x, 1.4 for 1.4.x) as meta-schema.ts
// builds them, precompiled by codegen into generated/meta-validators.ts.
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import { KNOWN_13, openrpcMeta13, openrpcMeta14 } from './generated/meta-validators.js';
import { kindAt } from './load.js';
import { META_AJV_OPTIONS, buildMetaSchema } from './meta-schema.js';
import type { Json } from './parse.js';
import { fromPointer, toPointer } from './parse.js';

export interface Finding {
  /** `#/methods/3/result` */
  pointer: string;
  message: string;
}

/** The plain meta-schemas are precompiled (codegen/meta-validators.ts); a document's `x-extensions` extend its
 *  meta-schema, which is then built and compiled here (schema-utils imported only then). */
async function metaValidator(doc: Json, family: '1.3' | '1.4'): Promise<ValidateFunction> {
  if (!Array.isArray(doc['x-extensions']))
    return (family === '1.4' ? openrpcMeta14 : openrpcMeta13) as ValidateFunction;
  const { getDocumentExtendedMetaSchema } = await import('@open-rpc/schema-utils-js');
  return new Ajv(META_AJV_OPTIONS).compile(buildMetaSchema(getDocumentExtendedMetaSchema(doc) as Json));
}

const OBJECT_KINDS = new Set(['method', 'cd', 'error', 'pairing', 'example']);

const at = (doc: Json, segs: readonly string[]): Json => {
  let cur = doc;
  for (const s of segs) cur = cur == null ? undefined : cur[s];
  return cur;
};

/** Errors and warnings of `doc` against its version's meta-schema and the rules the meta-schema leaves out. */
export async function checkDocument(doc: Json): Promise<{ errors: Finding[]; warnings: Finding[] }> {
  const errors: Finding[] = [];
  const warnings: Finding[] = [];
  const version = doc.openrpc;
  const m = typeof version === 'string' ? /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(version) : null;
  if (m?.[1] !== '1') {
    errors.push({
      pointer: '#/openrpc',
      message: `unsupported OpenRPC version ${JSON.stringify(version)} (this toolkit reads 1.0.0-rc0 … 1.4.x)`,
    });
    return { errors, warnings };
  }
  const minor = Number(m[2]);
  const family = minor >= 4 ? '1.4' : '1.3';
  let canonical = version as string;
  const exact = family === '1.4' ? /^1\.4\.\d+$/.test(version) : KNOWN_13.includes(version);
  if (!exact) {
    canonical = family === '1.4' ? '1.4.0' : (KNOWN_13.find((v) => v.startsWith(`1.${minor}.`)) ?? '1.3.2');
    warnings.push({
      pointer: '#/openrpc',
      message:
        minor > 4
          ? `OpenRPC ${version} is newer than this toolkit knows; read as ${canonical}`
          : `"${version}" is not an OpenRPC version number; read as ${canonical}`,
    });
  }
  const copy = structuredClone({ ...doc, openrpc: canonical });
  const validate = await metaValidator(copy, family);
  for (let round = 0; round < 4; round++) {
    if (validate(copy)) break;
    const { hard, unknown } = classify(copy, validate.errors ?? []);
    if (hard.length) {
      errors.push(...hard);
      break;
    }
    if (!unknown.length) break;
    for (const u of unknown) {
      const segs = fromPointer(u.pointer);
      const parent = at(copy, segs.slice(0, -1));
      if (parent && typeof parent === 'object') delete parent[segs[segs.length - 1]];
      warnings.push({ pointer: u.pointer, message: u.message });
    }
  }
  // Rules the meta-schemas do not encode.
  const methods: Json[] = Array.isArray(doc.methods) ? doc.methods : [];
  if (minor < 3) {
    methods.forEach((mt, i) => {
      if (mt && typeof mt === 'object' && typeof mt.$ref !== 'string' && mt.result === undefined)
        warnings.push({
          pointer: toPointer(['methods', i]),
          message: `method ${JSON.stringify(mt.name)} has no "result", which OpenRPC ${version} requires; read as a method whose result is not described`,
        });
    });
  }
  if (minor < 4) {
    const servers: [Json, (string | number)[]][] = [];
    for (const [i, sv] of (Array.isArray(doc.servers) ? doc.servers : []).entries()) servers.push([sv, ['servers', i]]);
    for (const [i, mt] of methods.entries())
      for (const [j, sv] of (Array.isArray(mt?.servers) ? mt.servers : []).entries())
        servers.push([sv, ['methods', i, 'servers', j]]);
    for (const [s, p] of servers) {
      if (!s || typeof s.url !== 'string') continue;
      if (!/^[a-z][a-z0-9+.-]*:/i.test(s.url.replace(/\{[^}]*\}/g, 'x')))
        warnings.push({
          pointer: toPointer([...p, 'url']),
          message: `server URL "${s.url}" is relative (OpenRPC ${version} wants a URL; 1.4 allows this): clients resolve it against where the document is served`,
        });
    }
  }
  return { errors, warnings };
}

/** Unknown properties (warnings: removed and checked again) apart from the rest (errors); summaries of a combinator dropped. */
function classify(doc: Json, errs: ErrorObject[]): { hard: Finding[]; unknown: Finding[] } {
  const hard: Finding[] = [];
  const unknown: Finding[] = [];
  const seen = new Set<string>();
  for (const e of errs) {
    if (e.keyword === 'oneOf' || e.keyword === 'anyOf' || e.keyword === 'if') continue;
    const segs = fromPointer(e.instancePath);
    const node = at(doc, segs);
    const refObject =
      OBJECT_KINDS.has(kindAt(segs)) && node && typeof node === 'object' && typeof node.$ref === 'string';
    const pointer = toPointer(segs);
    if (e.keyword === 'additionalProperties') {
      const prop = (e.params as { additionalProperty: string }).additionalProperty;
      const p = toPointer([...segs, prop]);
      if (seen.has(p)) continue;
      seen.add(p);
      unknown.push({
        pointer: p,
        message: refObject
          ? `"${prop}" beside "$ref" is not part of a reference object; ignored`
          : `unknown property "${prop}" (not in the OpenRPC specification; ignored)`,
      });
      continue;
    }
    let message = e.message ?? e.keyword;
    if (e.keyword === 'enum')
      message += `: ${(e.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
    const key = `${pointer} ${message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    hard.push({ pointer, message });
  }
  return { hard, unknown };
}
