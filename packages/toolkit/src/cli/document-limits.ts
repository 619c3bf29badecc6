// The flags of loading a document, shared by every command that reads an OpenRPC document (generate, docs, mock,
// conformance --spec): the limits on dereferencing it (../contract/bounds.ts), which `$ref`s may be followed
// (--allow-remote-refs, --ref-root; ../contract/load.ts) and --strict (warnings are errors).
import { type Command, InvalidArgumentError } from 'commander';
import { DEFAULT_DOCUMENT_LIMITS, DOCUMENT_LIMIT_FLAGS, parseLimit, type DocumentLimits } from '../contract/bounds.js';
import type { LoadOptions } from '../contract/load.js';
import { formatProblem, type DocumentProblem } from '../contract/parse.js';

export interface DocumentLimitFlags {
  maxRefExpansions?: number;
  maxRefDepth?: number;
  maxDerefNodes?: number;
  allowRemoteRefs?: boolean;
  refRoot?: string[];
  strict?: boolean;
}

const positive = (flag: string) => (v: string) => {
  try {
    return parseLimit(flag, v);
  } catch (e) {
    throw new InvalidArgumentError((e as Error).message);
  }
};

const collect = (v: string, prev: string[] = []) => [...prev, v];

/** Adds --max-ref-expansions, --max-ref-depth, --max-deref-nodes, --allow-remote-refs, --ref-root and --strict. */
export function withDocumentLimits(cmd: Command): Command {
  const d = DEFAULT_DOCUMENT_LIMITS;
  return cmd
    .option('--allow-remote-refs', 'follow $refs to http(s) URLs (fetched with a size and time limit); off by default')
    .option(
      '--ref-root <dir>',
      "let $refs read files under <dir> too (default: only the document's own folder tree; repeatable)",
      collect,
    )
    .option(
      '--strict',
      'treat warnings (a document that breaks its meta-schema without stopping us reading it) as errors',
    )
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

/** What a command's flags allow loading to do. */
export const loadOptions = (flags: DocumentLimitFlags): LoadOptions => ({
  allowRemoteRefs: flags.allowRemoteRefs === true,
  refRoots: flags.refRoot,
  strict: flags.strict === true,
});

/** Prints a document's warnings, one line each (`warning: file:line:col #/pointer: message`). */
export function printWarnings(warnings: readonly DocumentProblem[], err: (s: string) => void): void {
  for (const w of warnings) err(`warning: ${formatProblem(w)}`);
}
