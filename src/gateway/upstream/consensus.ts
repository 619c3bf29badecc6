// The consensus head of a network's fleet (issue 24 item 2), as proxyd's consensus poller and eRPC's state poller do:
// while the pool has two upstreams or more and is in use, each healthy upstream is asked eth_blockNumber every
// `headPollMs` (straight to its transport: not counted as traffic), and every eth_blockNumber a client's call gets
// answered teaches its upstream's head too.
//   - consensus: the highest block served by a quorum of the healthy upstreams whose head is known (`quorum`, 0 = a
//     majority of them, at least one);
//   - rotation: an upstream more than `maxBlockLag` blocks behind the best head is out of rotation for head-relative
//     calls (`latest`, eth_blockNumber) until it catches up; it still serves calls for blocks it has;
//   - floor: the highest head rpcgate has answered (eth_blockNumber) or agreed (consensus); eth_blockNumber is never
//     answered below it, and `latest` goes to an upstream whose head is at it — neither goes backwards.
// At an upstream's first known head the pool probes how deep its state goes (a binary search of eth_getBalance over
// the depth below its head, ≤ 16 calls, once): a pruned node is known before a client's old-state read meets it.
import { type Capabilities, refusalOf } from './capabilities.js';

export interface FleetConfig {
  /** Upstreams that must serve a block for it to be the consensus head; 0 = a majority of the healthy ones. */
  readonly quorum: number;
  /** Blocks behind the best head an upstream may be and still serve head-relative calls. */
  readonly maxBlockLag: number;
  /** How often each upstream's head is polled while the pool is in use (ms); 0 = never (answers teach heads). */
  readonly headPollMs: number;
  /** Probe each upstream's state depth at start. */
  readonly probeState: boolean;
  /** eth_getLogs chunks in flight at once for one split query. */
  readonly getLogsSplitConcurrency: number;
}

export const FLEET_DEFAULTS: FleetConfig = {
  quorum: 0,
  maxBlockLag: 5,
  headPollMs: 1000,
  probeState: true,
  getLogsSplitConcurrency: 4,
};

/** No use for this long: polling stops until the next call. */
const IDLE_MS = 60_000;
const MAX_PROBES = 16;
const ZERO_ADDRESS = `0x${'00'.repeat(20)}`;

export interface FleetMember {
  readonly caps: Capabilities;
  readonly label: string | number;
  /** Circuit closed. */
  healthy(): boolean;
  /** One call of `method` straight to the upstream (no pool bookkeeping beyond its budget) → its response text. */
  send(body: string, method: string): Promise<string>;
}

const body = (method: string, params: unknown[]) => JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

async function ask(m: FleetMember, method: string, params: unknown[]): Promise<{ result?: unknown; error?: unknown }> {
  const parsed = JSON.parse(await m.send(body(method, params), method)) as { result?: unknown; error?: unknown } | null;
  if (parsed === null || typeof parsed !== 'object') throw new Error('no JSON-RPC answer');
  return parsed;
}

export class Consensus {
  /** Highest head answered or agreed: eth_blockNumber and `latest` never go below it. */
  floor = 0;
  private timer: NodeJS.Timeout | undefined;
  private lastUse = 0;
  private polling = false;
  private stopped = false;
  private readonly probed = new Set<FleetMember>();

  constructor(
    private readonly members: readonly FleetMember[],
    readonly cfg: FleetConfig,
    private readonly onLag?: (label: string | number, lag: number) => void,
  ) {}

  /** A fleet: more than one upstream (a lone upstream has nobody to agree with, and is not polled). */
  get active(): boolean {
    return this.members.length > 1;
  }

  /** The pool is in use: poll heads (first use: at once). */
  touch(): void {
    if (!this.active || this.stopped || this.cfg.headPollMs <= 0) return;
    this.lastUse = Date.now();
    if (this.timer === undefined) void this.poll();
  }

  /** Heads of the healthy upstreams whose head is known. */
  private heads(): number[] {
    const out: number[] = [];
    for (const m of this.members) if (m.healthy() && m.caps.head > 0) out.push(m.caps.head);
    return out;
  }

  /** The best known head of a healthy upstream (0: none known). */
  best(): number {
    let b = 0;
    for (const h of this.heads()) if (h > b) b = h;
    return b;
  }

  /** The highest block a quorum of healthy upstreams serve (undefined: no head known). */
  consensusHead(): number | undefined {
    const hs = this.heads().sort((a, b) => b - a);
    if (hs.length === 0) return undefined;
    const q = this.cfg.quorum > 0 ? Math.min(this.cfg.quorum, hs.length) : Math.floor(hs.length / 2) + 1;
    return hs[q - 1];
  }

  /** In rotation for head-relative calls: head unknown yet, or within maxBlockLag of the best. */
  inRotation(m: FleetMember): boolean {
    return m.caps.head === 0 || this.best() - m.caps.head <= this.cfg.maxBlockLag;
  }

  /** Blocks behind the best head (undefined: its head is not known). */
  lagOf(m: FleetMember): number | undefined {
    return m.caps.head === 0 ? undefined : Math.max(0, this.best() - m.caps.head);
  }

  /** An eth_blockNumber answer of `m`: its head, and the head rpcgate answers (never below the floor). */
  answered(m: FleetMember, head: number): number {
    if (head > m.caps.head) m.caps.head = head;
    if (head > this.floor) this.floor = head;
    return this.floor;
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    if (this.stopped || this.polling) return;
    this.polling = true;
    try {
      await Promise.all(
        this.members.map(async (m) => {
          if (!m.healthy()) return;
          try {
            const r = await ask(m, 'eth_blockNumber', []);
            if (typeof r.result !== 'string') return;
            m.caps.head = Number(r.result); // a reorg may move it back
            if (this.cfg.probeState && !this.probed.has(m)) {
              this.probed.add(m);
              void this.probeState(m).catch(() => this.probed.delete(m));
            }
          } catch {
            // the breaker hears of it from real traffic; the head stays as last known
          }
        }),
      );
      const c = this.consensusHead();
      if (c !== undefined && c > this.floor) this.floor = c;
      if (this.onLag) for (const m of this.members) this.onLag(m.label, this.lagOf(m) ?? 0);
    } finally {
      this.polling = false;
    }
    if (!this.stopped && Date.now() - this.lastUse < IDLE_MS) {
      this.timer = setTimeout(() => void this.poll(), this.cfg.headPollMs);
      this.timer.unref();
    }
  }

  /** How deep below its head `m` holds state: block 1 first (an archive node answers: done), else a binary search
   *  over the depth. Only a "not here" answer counts as missing; anything else ends the probe as unknown. */
  private async probeState(m: FleetMember): Promise<void> {
    const head = m.caps.head;
    if (head < 2) return;
    const has = async (depth: number): Promise<boolean | undefined> => {
      const r = await ask(m, 'eth_getBalance', [ZERO_ADDRESS, `0x${(head - depth).toString(16)}`]);
      if ('result' in r) return true;
      const e = r.error as { code?: number; message?: string } | undefined;
      return refusalOf('eth_getBalance', { code: e?.code ?? 0, message: e?.message ?? '' })?.kind === 'state'
        ? false
        : undefined;
    };
    let hi = head - 1; // a depth known (or to be shown) missing
    const top = await has(hi);
    if (top !== false) return;
    let lo = 0; // a depth known present (the head itself is assumed)
    for (let i = 0; i < MAX_PROBES && hi - lo > 1; i++) {
      const mid = Math.floor((lo + hi) / 2);
      const h = await has(mid);
      if (h === undefined) break;
      if (h) lo = mid;
      else hi = mid;
    }
    m.caps.stateMissingDepth = Math.min(m.caps.stateMissingDepth, hi);
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }
}
