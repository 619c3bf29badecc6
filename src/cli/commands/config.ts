// `rpcgate config`: every setting of contracts/config.schema.json with its environment variable(s), type and default —
// the names `rpcgate start` reads (env RPCGATE_A_B_C, `--set a.b.c=value`), derived from the schema like the loader
// does. `--schema` prints the JSON Schema itself (for editors validating a config file).
import type { Command } from 'commander';
import { configSchema } from '../../../generated/config/types.js';
import { defaults, settings, type SchemaNode } from '../../gateway/config/config.js';
import { table } from '../output.js';

const deref = (s: SchemaNode = {}): SchemaNode =>
  s.$ref
    ? (s.$ref
        .split('/')
        .slice(1)
        .reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], configSchema) as SchemaNode)
    : s;

function typeOf(s?: SchemaNode): string {
  const node = deref(s);
  if (node.enum) return node.enum.join('|');
  if (node.anyOf) return node.anyOf.map(typeOf).join('|');
  if (node.type === 'array') {
    const item = typeOf(node.items ?? {});
    return item.includes('|') ? `(${item})[]` : `${item}[]`;
  }
  if (node.additionalProperties && !node.properties) return 'map';
  return [node.type ?? 'any'].flat().join('|');
}

export function register(program: Command): void {
  program
    .command('config')
    .description('list every configuration setting: path (--set), environment variable, type, default')
    .option('--schema', 'print the configuration JSON Schema')
    .option('--json', 'print the list as one JSON object')
    .action((flags: { schema?: boolean; json?: boolean }) => {
      if (flags.schema) return void console.log(JSON.stringify(configSchema, null, 2));
      const rows = settings().map((s) => {
        // The effective default, else the schema's (plan limits are applied by src/gateway/limits/plans.ts).
        const value =
          (s.path.includes('*')
            ? undefined
            : s.path.reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], defaults)) ??
          deref(s.schema).default;
        return {
          path: s.path.join('.'),
          env: [s.env, ...s.aliases].join(' '),
          type: typeOf(s.schema),
          default: value === undefined ? '' : JSON.stringify(value),
        };
      });
      if (flags.json) return void console.log(JSON.stringify({ settings: rows }));
      console.log(
        [
          'Layers, lowest first: defaults ← --config file (env RPCGATE_CONFIG) ← environment ← rpcgate start --set path=value.',
          '`*` is a network name (RPCGATE_NETWORKS_HOLESKY_CHAIN_ID, --set networks.holesky.chainId=17000).',
          '',
          table(rows, { PATH: 'path', ENV: 'env', TYPE: 'type', DEFAULT: 'default' }),
        ].join('\n'),
      );
    });
}
