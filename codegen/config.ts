// generated/config/types.ts from contracts/config.schema.json: the `Config` type (and its named parts) by
// json-schema-to-typescript, plus the schema itself as a constant, so the gateway validates with the very schema
// the type came from and needs no file at run time (works the same from tsx and from a compiled dist/).
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { compile } from 'json-schema-to-typescript';
import { format } from 'prettier';
import { PRETTIER } from '../packages/toolkit/src/codegen/types.js';
import { tsHeader } from '../packages/toolkit/src/codegen/schema.js';

export const CONFIG_SCHEMA_FILE = 'contracts/config.schema.json';

export async function generateConfig(root: string): Promise<Map<string, string>> {
  const schema = JSON.parse(await readFile(path.join(root, CONFIG_SCHEMA_FILE), 'utf8')) as Record<string, unknown>;
  const types = await compile(structuredClone(schema) as never, 'Config', {
    bannerComment: '',
    declareExternallyReferenced: true,
    unreachableDefinitions: false,
    additionalProperties: false,
    strictIndexSignatures: false,
    format: false,
    unknownAny: true,
    cwd: root,
  });
  const text = [
    tsHeader(CONFIG_SCHEMA_FILE),
    types,
    `\n/** The JSON Schema of {@link Config} (${CONFIG_SCHEMA_FILE}). */\n`,
    `export const configSchema = ${JSON.stringify(schema)} as const;\n`,
  ].join('');
  return new Map([['generated/config/types.ts', await format(text, PRETTIER)]]);
}
