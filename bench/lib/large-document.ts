// A synthetic Lotus-size OpenRPC document (about 1.25 MB, 240 methods, 120 object components), for the bench of issue
// 19 item 8 (bench/toolkit-large.ts) and for the test that such a document loads under the default document limits
// (test/toolkit-hostile.test.ts). Seeded: the same bytes every run.
//
// Its components refer to one another the way published documents do: in a few layers (60 leaf components, 40 that
// refer to leaves, 20 that refer to those or to leaves), so the document dereferenced stays within a small multiple of
// its size. An earlier version let every component refer to three earlier ones picked at random — a chain 120 deep
// with a fan-out of 3, whose dereferenced tree has about 58 million nodes: a "billion laughs" by accident, which the
// default maxDerefNodes (500,000) rightly refuses. No published document is shaped so: the vendored Lotus full.json
// (1.19 MB, 240 methods) reaches about 11,300 nodes, the Ethereum execution-apis spec about 12,000.

export const LAYERS = { leaves: 60, middle: 40, top: 20 } as const;

/** `chained: true` gives the earlier shape (every component referring to three earlier ones at random), for the test
 *  that shows why it is refused. */
export function syntheticLargeDocument({ chained = false }: { chained?: boolean } = {}): {
  openrpc: string;
  info: object;
  methods: object[];
  components: { schemas: Record<string, object> };
} {
  let seed = 1;
  const rnd = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
  const pick = (from: number, to: number) => from + Math.floor(rnd() * (to - from));
  const word = () =>
    ['Tipset', 'Block', 'Message', 'Actor', 'Sector', 'Deal', 'Miner', 'Power', 'Claim'][Math.floor(rnd() * 9)];
  const { leaves, middle, top } = LAYERS;
  const count = leaves + middle + top;
  /** A component of a lower layer than component i (none for a leaf). */
  const lower = (i: number): number | undefined =>
    chained
      ? i > 0
        ? pick(0, i)
        : undefined
      : i < leaves
        ? undefined
        : i < leaves + middle
          ? pick(0, leaves)
          : pick(0, leaves + middle);
  const schemas: Record<string, object> = {};
  for (let i = 0; i < count; i++) {
    const properties: Record<string, object> = {};
    for (let j = 0; j < 12; j++) {
      const k = `${word()}${j}`;
      const target = j % 4 === 0 ? lower(i) : undefined;
      properties[k] =
        target !== undefined
          ? { $ref: `#/components/schemas/S${target}`, description: `the ${k} of this ${word()}` }
          : j % 4 === 1
            ? { type: 'array', items: { type: 'object', properties: { '/': { type: 'string' } }, required: ['/'] } }
            : j % 4 === 2
              ? { type: 'integer', minimum: 0, description: `${word()} height in epochs` }
              : { type: 'string', pattern: '^0x[0-9a-f]*$', description: `hex ${word()} bytes`.repeat(4) };
    }
    schemas[`S${i}`] = {
      type: 'object',
      description: `A ${word()} as the node returns it. `.repeat(6),
      properties,
      required: Object.keys(properties).slice(0, 3),
      examples: [Object.fromEntries(Object.keys(properties).map((k) => [k, 'example value of the member']))],
    };
  }
  const methods = [];
  for (let i = 0; i < 240; i++) {
    const ref = () => ({ $ref: `#/components/schemas/S${pick(0, count)}` });
    methods.push({
      name: `Filecoin.${word()}Get${i}`,
      summary: `Returns the ${word()} for a ${word()}.`,
      description: `Long description of the method, as Lotus writes them with its Go doc comments. `.repeat(23),
      paramStructure: 'by-position',
      params: [
        { name: 'key', required: true, schema: ref(), description: 'the key' },
        { name: 'tsk', required: true, schema: { type: 'array', items: ref() } },
        { name: 'opts', schema: { type: 'object', properties: { limit: { type: 'integer' } } } },
      ],
      result: { name: 'out', schema: i % 3 === 0 ? { type: 'array', items: ref() } : ref() },
      examples: [
        {
          name: 'example',
          params: [
            { name: 'key', value: { a: 'example '.repeat(20) } },
            { name: 'tsk', value: [] },
          ],
          result: { name: 'out', value: { b: 'result '.repeat(40) } },
        },
      ],
    });
  }
  return {
    openrpc: '1.2.6',
    info: { title: 'Synthetic Lotus-size API', version: '1.0.0' },
    methods,
    components: { schemas },
  };
}
