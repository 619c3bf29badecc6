// generated/<api>/methods.ts: the method descriptor as data (protobuf-es style): names, param names and
// requiredness, error codes, and the method's specification extensions (`x-…` keys, copied verbatim `as const` so
// their literal types survive); the param/result types ride along as phantom types for the engine and client.
import type { ContractModel } from '../contract/model.js';
import { jsdoc, objKey, str, tsHeader, type HeaderOptions } from './schema.js';
import { formatTs } from './types.js';
import { RUNTIME_IMPORT } from './schema.js';
import { nameDocument, type Naming } from './naming.js';

export async function writeMethods(c: ContractModel, opts: HeaderOptions & { naming?: Naming } = {}): Promise<string> {
  const naming = opts.naming ?? nameDocument(c);
  const base = (m: { name: string }) => naming.methods.get(m.name)!;
  const byName = c.methods.filter((m) => m.paramStructure === 'by-name');
  const typeImports = c.methods.flatMap((m) => [
    `${base(m)}Params`,
    ...(m.paramStructure === 'by-name' ? [`${base(m)}ParamsByName`] : []),
    `${base(m)}Result`,
  ]);
  const out: string[] = [tsHeader(c.spec.file, opts)];
  out.push(`import type { ${byName.length ? 'ByName, ' : ''}MethodDescriptor } from '${RUNTIME_IMPORT}';\n`);
  if (typeImports.length) out.push(`import type { ${typeImports.join(', ')} } from './types.js';\n`);
  out.push('\n');
  out.push(jsdoc([`The contract this descriptor was generated from.`]));
  out.push(
    `export const contract = { name: ${str(c.spec.name)}, file: ${str(c.spec.file)}, title: ${str(c.title)}, version: ${str(c.version)}, openrpc: ${str(c.raw.openrpc)} } as const;\n\n`,
  );
  out.push(
    jsdoc([`Specification extensions (\`x-…\` keys) of the methods that have any, verbatim from the contract.`]),
  );
  out.push('export const extensions = {\n');
  for (const m of c.methods) {
    if (m.ext.length === 0) continue;
    out.push(`  ${objKey(m.name)}: { ${m.ext.map(([k, v]) => `${str(k)}: ${JSON.stringify(v)}`).join(', ')} },\n`);
  }
  out.push('} as const;\n\n');
  out.push(
    jsdoc([
      `Every method of the ${c.spec.name} API, as data. Params/result types are phantom (\`MethodDescriptor<P, R>\`).`,
    ]),
  );
  out.push('export const methods = {\n');
  for (const m of c.methods) {
    out.push(jsdoc([m.summary, m.deprecated ? '@deprecated' : undefined], '  '));
    const params = m.params.map((p) => `{ name: ${str(p.name)}, required: ${p.required} }`).join(', ');
    const errors = [...new Set(m.errors.map((e) => e.code))].join(', ');
    const ext = m.ext.length === 0 ? '' : `, ext: extensions[${str(m.name)}]`;
    const extType = m.ext.length === 0 ? '' : `, (typeof extensions)[${str(m.name)}]`;
    // By-name methods carry their params object type as a phantom brand: the typed client accepts it.
    const brand = m.paramStructure === 'by-name' ? ` & ByName<${base(m)}ParamsByName>` : '';
    out.push(
      `  ${objKey(m.name)}: { name: ${str(m.name)}, summary: ${str(m.summary)}, params: [${params}], errors: [${errors}], paramStructure: ${str(m.paramStructure)}${ext} } as MethodDescriptor<${base(m)}Params, ${base(m)}Result${extType}>${brand},\n`,
    );
  }
  out.push('} as const;\n\n');
  out.push(`export type Methods = typeof methods;\n`);
  out.push(`export type MethodName = keyof Methods;\n`);
  return formatTs(out.join(''));
}
