// @rpcgate/client carries its own copies of the ajv runtime helpers generated validators call (ajv itself is 2.5 MB
// installed; the client must stay under 2 MB with no dependency). They must answer as ajv's own do on the same inputs.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ajvEqual, ajvUcs2length, ajvUri, AjvValidationError } from '@rpcgate/client';

const require = createRequire(import.meta.url);
const ajv = (name: string) => require(`ajv/dist/runtime/${name}`).default;

describe('the ajv runtime helpers of @rpcgate/client', () => {
  const values: unknown[] = [
    0,
    -0,
    1,
    NaN,
    '',
    'a',
    'é',
    true,
    false,
    null,
    undefined,
    [],
    [1, 2],
    [2, 1],
    [[1], { a: 1 }],
    {},
    { a: 1 },
    { a: 1, b: 2 },
    { b: 2, a: 1 },
    { a: undefined },
    { b: undefined },
    { a: [1, { c: 'x' }] },
    { a: [1, { c: 'y' }] },
    /x/g,
    /x/i,
    new Date(0),
    new Date(1),
  ];
  it('ajvEqual agrees with ajv (fast-deep-equal) on every pair', () => {
    const theirs = ajv('equal');
    for (const [i, a] of values.entries())
      for (const [j, b] of values.entries()) expect(ajvEqual(a, b), `values[${i}] vs values[${j}]`).toBe(theirs(a, b));
  });
  it('ajvUcs2length counts code points as ajv does (surrogate pairs, lone surrogates)', () => {
    const theirs = ajv('ucs2length');
    for (const s of [
      '',
      'abc',
      'é',
      '😀',
      'a😀b',
      '\ud83d',
      '\ude00',
      '\ud83d\ud83d',
      '😀😀😀\ud83d',
      'x'.repeat(1000),
    ])
      expect(ajvUcs2length(s), JSON.stringify(s)).toBe(theirs(s));
  });
  it('ajvUri resolves $id references as ajv does', () => {
    const theirs = ajv('uri');
    for (const [base, ref] of [
      ['https://example.com/a/b.json', 'c.json'],
      ['https://example.com/a/b.json', '#/definitions/x'],
      ['https://example.com/a/b.json', '../c.json#foo'],
      ['https://example.com/a/', 'https://other.org/x'],
    ])
      expect(ajvUri.resolve(base, ref)).toBe(theirs.resolve(base, ref));
  });
  it('AjvValidationError carries the errors as ajv’s does', () => {
    const theirs = new (ajv('validation_error'))([{ keyword: 'type' }]);
    const ours = new AjvValidationError([{ keyword: 'type' }]);
    expect({ message: ours.message, errors: ours.errors, ajv: ours.ajv, validation: ours.validation }).toEqual({
      message: theirs.message,
      errors: theirs.errors,
      ajv: theirs.ajv,
      validation: theirs.validation,
    });
    expect(ours).toBeInstanceOf(Error);
  });
});
