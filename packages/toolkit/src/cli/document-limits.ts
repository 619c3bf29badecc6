// The flags that raise the limits on loading a document (../contract/bounds.ts), shared by every command that
// reads an OpenRPC document (generate, docs, mock, conformance --spec).
import { type Command, InvalidArgumentError } from 'commander';
import { DEFAULT_DOCUMENT_LIMITS, DOCUMENT_LIMIT_FLAGS, parseLimit, type DocumentLimits } from '../contract/bounds.js';

export interface DocumentLimitFlags {
  maxRefExpansions?: number;
  maxRefDepth?: number;
  maxDerefNodes?: number;
}

const positive = (flag: string) => (v: string) => {
  try {
    return parseLimit(flag, v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
};

/** Adds --max-ref-expansions, --max-ref-depth and --max-deref-nodes to a command. */
export function withDocumentLimits(cmd: Command): Command {
  const d = DEFAULT_DOCUMENT_LIMITS;
  return cmd
    .option(
      `${DOCUMENT_LIMIT_FLAGS.maxRefExpansions} <n>`,
      `references the document may inline once dereferenced (default ${d.maxRefExpansions})`,
      positive(DOCUMENT_LIMIT_FLAGS.maxRefExpansions),
    )
    .option(
      `${DOCUMENT_LIMIT_FLAGS.maxRefDepth} <n>`,
      `references nested in one another (default ${d.maxRefDepth})`,
      positive(DOCUMENT_LIMIT_FLAGS.maxRefDepth),
    )
    .option(
      `${DOCUMENT_LIMIT_FLAGS.maxDerefNodes} <n>`,
      `objects and arrays in the dereferenced document (default ${d.maxDerefNodes})`,
      positive(DOCUMENT_LIMIT_FLAGS.maxDerefNodes),
    );
}

/** The limits a command's flags set (unset ones keep their defaults). */
export const documentLimits = (flags: DocumentLimitFlags): DocumentLimits => ({
  maxRefExpansions: flags.maxRefExpansions,
  maxRefDepth: flags.maxRefDepth,
  maxDerefNodes: flags.maxDerefNodes,
});
