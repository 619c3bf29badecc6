// The code tabs every method page gets, for any document: curl, fetch and the typed client `rpcgate generate` writes.
// `{{RPC_URL}}` stands for the endpoint (the Try it panel puts the chosen URL in). A writer's caller adds more tabs
// (the repository's node API adds ethers, web3.js, viem and web3.py).
import type { ContractModel, Json, MethodModel } from '../contract/model.js';
import { js } from '../codegen/schema.js';

export interface ExampleTab {
  /** Stable id; a tab given by the caller with the id of a default one replaces it. */
  id: string;
  label: string;
  /** Highlighting hint: shell, javascript, typescript, python, … */
  language: string;
  code: string;
}

export const RPC_URL_PLACEHOLDER = '{{RPC_URL}}';

/** Params as sent: a positional array, or an object for methods whose paramStructure is by-name. */
export type CallParams = Json[] | Record<string, Json>;

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

export function defaultExamples(c: ContractModel, m: MethodModel, params: CallParams): ExampleTab[] {
  const body = { jsonrpc: '2.0', id: 1, method: m.name, params };
  const dir = `./${c.spec.name.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
  const hasParams = Array.isArray(params) ? params.length > 0 : Object.keys(params).length > 0;
  return [
    {
      id: 'curl',
      label: 'curl',
      language: 'shell',
      code: `curl -s -X POST ${shellQuote(RPC_URL_PLACEHOLDER)} \\\n  -H 'Content-Type: application/json' \\\n  --data ${shellQuote(JSON.stringify(body))}\n`,
    },
    {
      id: 'fetch',
      label: 'JavaScript (fetch)',
      language: 'javascript',
      code: [
        `// Node.js 18+ or a browser: the global fetch`,
        `const response = await fetch('${RPC_URL_PLACEHOLDER}', {`,
        `  method: 'POST',`,
        `  headers: { 'Content-Type': 'application/json' },`,
        `  body: JSON.stringify({`,
        `    jsonrpc: '2.0',`,
        `    id: 1,`,
        `    method: ${js(m.name)},`,
        `    params: ${js(params, '    ')},`,
        `  }),`,
        `});`,
        `const { result, error } = await response.json();`,
        `if (error) throw new Error(\`error \${error.code}: \${error.message}\`);`,
        `console.log(JSON.stringify(result, null, 2));`,
        ``,
      ].join('\n'),
    },
    {
      id: 'rpcgate',
      label: 'TypeScript (rpcgate client)',
      language: 'typescript',
      code: [
        `// The typed client of this document: npx rpcgate generate <document> --out ${dir}`,
        `import { createClient } from '${dir}/client.js';`,
        ``,
        `const client = createClient({ url: '${RPC_URL_PLACEHOLDER}' });`,
        `const result = await client.request(${js(m.name)}${hasParams ? `, ${js(params)}` : ''});`,
        `console.log(JSON.stringify(result, null, 2));`,
        ``,
      ].join('\n'),
    },
  ];
}
