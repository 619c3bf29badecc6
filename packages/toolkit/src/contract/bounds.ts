// Limits on the work and memory a document may cost while it is loaded (issue 26, "billion laughs"): inlining `$ref`s
// turns a few kilobytes of components that each refer to the next several times into an exponentially large tree.
// Every inlined reference and every node of the copies made is counted against a budget; past it, loading stops at
// once with a DocumentLimitError that names the limit, its value, and the option and CLI flag that raise it.

export interface DocumentLimits {
  /** References inlined while dereferencing the whole document (default 100,000). */
  maxRefExpansions?: number;
  /** References inlined inside one another along one path (default 64). */
  maxRefDepth?: number;
  /** Objects and arrays in the dereferenced copies, all told (default 500,000: about 80 MB). */
  maxDerefNodes?: number;
}

/** The defaults: every document of the toolkit's corpus loads well within them (the Ethereum execution-apis spec
 *  inlines about 4,000 references into 12,000 nodes, the Lotus full.json of 1.25 MB and 240 methods reaches 11,300
 *  nodes, bench/toolkit-large.ts's synthetic document of that size 90,000); a billion-laughs document stops in well
 *  under a second of CPU and 200 MB. */
export const DEFAULT_DOCUMENT_LIMITS: Required<DocumentLimits> = Object.freeze({
  maxRefExpansions: 100_000,
  maxRefDepth: 64,
  maxDerefNodes: 500_000,
});

/** Each limit's option name (loadDocument's `limits`) and CLI flag. */
const HOW: Record<keyof DocumentLimits, { flag: string; what: string }> = {
  maxRefExpansions: { flag: '--max-ref-expansions', what: 'references inlined' },
  maxRefDepth: { flag: '--max-ref-depth', what: 'references nested' },
  maxDerefNodes: { flag: '--max-deref-nodes', what: 'nodes in the dereferenced document' },
};

export class DocumentLimitError extends Error {
  constructor(
    readonly limit: keyof DocumentLimits,
    readonly value: number,
    where: string,
  ) {
    const h = HOW[limit];
    super(
      `document too large once dereferenced: more than ${value} ${h.what} (at ${where}); ` +
        `limit ${limit} = ${value} — raise it with the option limits.${limit} or the CLI flag ${h.flag} <n> if the document is meant to be this large`,
    );
    this.name = 'DocumentLimitError';
  }
}

/** The CLI flag of each limit (for the commands' help). */
export const DOCUMENT_LIMIT_FLAGS = Object.fromEntries(Object.entries(HOW).map(([k, v]) => [k, v.flag])) as Record<
  keyof DocumentLimits,
  string
>;

/** A running count against the limits, shared by every pass over one document. */
export class DerefBudget {
  readonly limits: Required<DocumentLimits>;
  private expansions = 0;
  private nodes = 0;

  constructor(limits: DocumentLimits = {}) {
    this.limits = {
      ...DEFAULT_DOCUMENT_LIMITS,
      ...Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
    };
    for (const [k, v] of Object.entries(this.limits)) {
      if (!Number.isInteger(v) || v < 1) throw new Error(`limits.${k} must be a positive integer, got ${v}`);
    }
  }

  /** One reference inlined, `depth` references deep. */
  expand(ref: string, depth: number): void {
    if (++this.expansions > this.limits.maxRefExpansions)
      throw new DocumentLimitError('maxRefExpansions', this.limits.maxRefExpansions, ref);
    if (depth > this.limits.maxRefDepth) throw new DocumentLimitError('maxRefDepth', this.limits.maxRefDepth, ref);
  }

  /** One object or array copied. */
  node(where: string): void {
    if (++this.nodes > this.limits.maxDerefNodes)
      throw new DocumentLimitError('maxDerefNodes', this.limits.maxDerefNodes, where);
  }

  /** What was used so far (for tests and diagnostics). */
  used(): { expansions: number; nodes: number } {
    return { expansions: this.expansions, nodes: this.nodes };
  }
}

/** Parses a CLI flag's value for a limit: a positive integer (1_000_000 and 1e6 accepted). */
export function parseLimit(flag: string, value: string | undefined): number {
  const n = Number(String(value ?? '').replace(/_/g, ''));
  if (!Number.isInteger(n) || n < 1) throw new Error(`${flag} wants a positive integer, got ${JSON.stringify(value)}`);
  return n;
}
