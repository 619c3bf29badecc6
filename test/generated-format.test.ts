// Generated code is formatted by codegen (prettier, the toolkit's PRETTIER options), not by Biome, which skips generated/
// (biome.jsonc). check-generated proves generated/ is what codegen writes; this proves what codegen writes is formatted,
// so nobody is tempted to format generated/ by hand. validators.ts is ajv's standalone output, written unformatted on
// purpose (compiled code nobody reads; formatting it would be most of generate's time), and files over
// FORMAT_LIMIT_BYTES are written unformatted too (issue 26).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { check } from 'prettier';
import { describe, expect, it } from 'vitest';
import { FORMAT_LIMIT_BYTES, PRETTIER } from '../packages/toolkit/src/codegen/types.js';

const root = join(import.meta.dirname, '..');
const UNFORMATTED = new Set(['validators.ts']);

const files = readdirSync(join(root, 'generated'), { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts') && !UNFORMATTED.has(f.split('/').pop()!))
  .sort();

describe('generated TypeScript is formatted by codegen', () => {
  it('finds the generated clients, examples and config types', () => {
    for (const f of ['node/client.ts', 'node/types.ts', 'node/methods.ts', 'node/examples.ts', 'config/types.ts'])
      expect(files).toContain(f);
  });

  it.each(files)('generated/%s is prettier-formatted', async (f) => {
    const text = readFileSync(join(root, 'generated', f), 'utf8');
    // the limit applies to what the client writers format (formatTs); codegen's examples and config types are
    // formatted whatever their size
    if (!f.endsWith('/examples.ts') && f !== 'config/types.ts')
      expect(text.length, 'over the formatting limit: this test would need to skip it').toBeLessThanOrEqual(
        FORMAT_LIMIT_BYTES,
      );
    expect(await check(text, PRETTIER)).toBe(true);
  });
});
