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
