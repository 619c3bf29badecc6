// `@rpcgate/toolkit/cli`: the toolkit's commands — generate, docs, mock, conformance — as commander commands, for the
// package's own bin (`rpcgate-toolkit`, what `npx @rpcgate/toolkit …` runs) and for programs built on the toolkit
// (the gateway's `rpcgate` adds them to its own commands, with its node profile for `conformance` without --spec).
import { Command } from 'commander';
import { conformanceCommand } from './conformance.js';
import { docsCommand } from './docs.js';
import { generateCommand } from './generate.js';
import { mockCommand } from './mock.js';

export {
  conformanceAction,
  conformanceCommand,
  positiveIntOption,
  type ConformanceCliOptions,
  type DefaultProfile,
} from './conformance.js';
export { docsAction, docsCommand, type DocsCliOptions } from './docs.js';
export { checkFolder, generateAction, generateCommand, generateFiles, type GenerateCliOptions } from './generate.js';
export { mockCommand } from './mock.js';
export { stopWhenNpmParentExits } from './lifecycle.js';

/** The toolkit's program: its four commands under `name`. */
export function toolkitProgram(name = 'rpcgate-toolkit'): Command {
  return new Command(name)
    .description(
      'contract-first OpenRPC toolkit: typed clients, HTML docs, a mock and conformance checks for any OpenRPC document',
    )
    .showHelpAfterError()
    .addCommand(generateCommand())
    .addCommand(docsCommand())
    .addCommand(mockCommand())
    .addCommand(conformanceCommand());
}

/** Parses `argv` (node, script, command, …) and runs the command (the bin calls it). */
export async function run(argv: string[]): Promise<void> {
  await toolkitProgram().parseAsync(argv);
}
