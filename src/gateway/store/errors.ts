// Typed store errors the account API maps to clear JSON-RPC errors.

/** A per-user limit was reached (e.g. the 5th network key): nothing was stored. */
export class LimitError extends Error {
  override readonly name = 'LimitError';
  constructor(
    readonly what: string,
    readonly limit: number,
  ) {
    super(`limit reached: at most ${limit} ${what} per user`);
  }
}

/** A unique value is already taken (e.g. an email on sign-up). */
export class ConflictError extends Error {
  override readonly name = 'ConflictError';
  constructor(
    readonly field: string,
    message = `${field} is already taken`,
  ) {
    super(message);
  }
}

/** The database stopped answering, or is known down (./watch.ts): the account API answers -32045 at once. */
export class StoreDownError extends Error {
  override readonly name = 'StoreDownError';
  constructor() {
    super('the database is not answering');
  }
}

/** True for a unique-constraint violation on either dialect. */
export function isUniqueViolation(e: unknown): boolean {
  const code = (e as { code?: unknown } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

/** The referenced object does not exist (or belongs to another user — indistinguishable on purpose). */
export class NotFoundError extends Error {
  override readonly name = 'NotFoundError';
  constructor(readonly what: string) {
    super(`${what} not found`);
  }
}

// Connection-level failures: the database is down, restarting, unreachable, or too slow (connect / statement timeout).
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EPIPE',
  'EAI_AGAIN',
  'SQLITE_BUSY',
]);
const UNAVAILABLE_MESSAGES =
  /connection terminated|timeout exceeded when trying to connect|query read timeout|connection timeout|client has encountered a connection error|cannot use a pool after calling end/i;

/**
 * True when a store call failed because the database is unavailable (PostgreSQL down, restarting, unreachable or
 * timing out; SQLite locked past its busy timeout) rather than because of the call itself: the account API answers
 * these with -32045 (503) and the caller may retry.
 */
export function isStoreUnavailable(e: unknown): boolean {
  for (let x: unknown = e, depth = 0; x instanceof Error && depth < 4; x = (x as { cause?: unknown }).cause, depth++) {
    if (x instanceof StoreDownError) return true;
    const code = (x as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (UNAVAILABLE_CODES.has(code)) return true;
      // PostgreSQL SQLSTATE: 08 connection exception, 57P01-03 shutdown / cannot connect now, 57014 statement timeout.
      if (code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '57014')
        return true;
    }
    if (UNAVAILABLE_MESSAGES.test(x.message)) return true;
    if (x instanceof AggregateError && x.errors.some((y) => isStoreUnavailable(y))) return true;
  }
  return false;
}
