// rpcgate CLI. Each subcommand lives in src/cli/commands/<name>.ts and exports `register(program)`;
// they are discovered here, so adding a command never touches this file. The toolkit's commands (generate, docs, mock)
// come from @rpcgate/toolkit/cli; `conformance` is the toolkit's with the gateway's node profile (commands/conformance.ts).
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Command } from 'commander';

export interface CommandModule {
  register(program: Command): void;
}

const here = dirname(fileURLToPath(import.meta.url));
const TOOLKIT_COMMANDS = ['generate', 'docs', 'mock'] as const;

/**
 * `only`: the command about to run. When a module is named after it, only that one is loaded — `start` pulls in the
 * whole server (~1 s), which the account commands should not pay for. Help and unknown names load them all.
 */
export async function buildProgram(only?: string): Promise<Command> {
  const program = new Command('rpcgate')
    .description('contract-first JSON-RPC access service for EVM nodes')
    .showHelpAfterError();
  const dir = join(here, 'commands');
  const files = readdirSync(dir)
    .filter((f) => /\.(ts|js)$/.test(f) && !f.endsWith('.d.ts') && !f.endsWith('.test.ts'))
    .sort();
  const named = only === undefined ? undefined : files.find((f) => f.replace(/\.(ts|js)$/, '') === only);
  const toolkit =
    only !== undefined && !named && (TOOLKIT_COMMANDS as readonly string[]).includes(only)
      ? [only]
      : named
        ? []
        : TOOLKIT_COMMANDS;
  for (const f of named ? [named] : toolkit.length === 1 ? [] : files) {
    const mod = (await import(pathToFileURL(join(dir, f)).href)) as Partial<CommandModule>;
    if (typeof mod.register === 'function') mod.register(program);
  }
  if (toolkit.length) {
    const cli = await import('@rpcgate/toolkit/cli');
    const commands: Record<string, () => Command> = {
      generate: cli.generateCommand,
      docs: cli.docsCommand,
      mock: cli.mockCommand,
    };
    for (const name of toolkit) program.addCommand(commands[name]!());
  }
  return program;
}

/** Parses `argv` (node, script, command, …) and runs the command. bin/rpcgate.js calls it; so does running this file. */
export async function run(argv: string[]): Promise<void> {
  const program = await buildProgram(argv[2]);
  await program.parseAsync(argv);
}

// Run directly (`tsx src/cli/main.ts`, `node dist/src/cli/main.js`); bin/rpcgate.js imports it and calls run() itself.
if (process.argv[1] !== undefined && /[\\/]src[\\/]cli[\\/]main\.(ts|js)$/.test(process.argv[1]))
  await run(process.argv);
