// Where filters live: one interface, two stores. In-process (one replica, the embedded default) or Redis (replicas
// share filters: created through one, polled through another). Both expire a filter `idleMs` after its last poll
// and cap the filters of one owner; both update a filter only when its version is the one read (compare-and-set),
// so two concurrent polls of one filter never deliver the same changes twice.

/** The log criteria of eth_newFilter as given (validated by the contract before it gets here). */
export interface LogCriteria {
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
  address?: string | string[] | null;
  topics?: (string | string[] | null)[] | null;
}

/** A log as a node returns it (only the fields the filter looks at are typed). */
export interface LogObject {
  blockNumber: string;
  blockHash: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
  [k: string]: unknown;
}

export type FilterKind = 'logs' | 'blocks' | 'pending';

/** A filter's state. JSON-serialisable: the Redis store keeps it as one string. */
export interface FilterState {
  id: string;
  kind: FilterKind;
  /** The network it was created on: polled through another network's URL it is "not found". */
  network: string;
  /** The principal's stable id (kind:id): another key's poll is "not found". */
  owner: string;
  criteria?: LogCriteria;
  /** The last block delivered (its number and hash: a changed hash there is a reorg). */
  cursor: { number: number; hash: string };
  /** The first block whose changes it returns (the head at creation + 1): a reorg re-scan never reaches before it. */
  start: number;
  /** Recent delivered blocks (number, hash), oldest first, at most the reorg window: block filters find the fork point here. */
  recent?: { number: number; hash: string }[];
  /** Logs delivered in the reorg window (log filters): re-sent with removed: true when their block is dropped. */
  delivered?: LogObject[];
  createdAt: number;
  polledAt: number;
}

/** A stored filter with the version its next update must name. */
export interface Versioned {
  state: FilterState;
  version: number;
}

export type CreateResult = { ok: true } | { ok: false; count: number };

export interface FilterStore {
  /** Stores a new filter unless its owner already has `cap` live ones (atomically: concurrent creates never pass the cap). */
  create(state: FilterState, cap: number): Promise<CreateResult>;
  /** The live filter with this id, or undefined (missing or expired). */
  get(id: string): Promise<Versioned | undefined>;
  /** Replaces the filter and restarts its idle timer when its version is still `version`; false when another poll won or it expired. */
  update(state: FilterState, version: number): Promise<boolean>;
  /** Removes the filter when `owner` owns it; true when it was there. */
  delete(id: string, owner: string): Promise<boolean>;
  close(): Promise<void>;
}
