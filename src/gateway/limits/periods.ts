// The limit periods, in one table: a window of a fixed length (`ms`) starts at a multiple of it; the others follow
// the UTC calendar (windows.ts). `quota` words name a used-up quota in the refusal's message (headers.ts); the
// per-second period is the rate (429 with Retry-After), every other one a quota (402).
export const PERIODS = {
  second: { ms: 1000, quota: 'per-second' },
  day: { ms: undefined, quota: 'daily' },
  month: { ms: undefined, quota: 'monthly' },
} as const satisfies Record<string, { ms: number | undefined; quota: string }>;

export type LimitPeriod = keyof typeof PERIODS;
