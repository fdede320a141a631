/**
 * @module runs/time-bound
 * A time given on the command line or in a query (`--since`, `--until`): an ISO 8601 date
 * or date-time (`2025-11-30`, `2025-11-30T12:00:00Z`, with an offset or without one, read
 * as UTC), or Unix nanoseconds as a whole number. Returned as exact Unix nanoseconds.
 */
export class TimeBoundError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TimeBoundError';
  }
}

const ISO = /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.(\d{1,9}))?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

export function parseTimeBound(name: string, text: string): bigint {
  const value = text.trim();
  if (/^\d+$/.test(value)) return BigInt(value);
  const m = ISO.exec(value);
  if (!m) {
    throw new TimeBoundError(
      `${name} must be an ISO 8601 time (2025-11-30 or 2025-11-30T12:00:00Z) or Unix nanoseconds, got ${JSON.stringify(text)}`,
    );
  }
  // Date.parse keeps milliseconds only: parse without the fraction, add the exact fraction back.
  const fraction = m[1] ?? '';
  const withoutFraction = value.replace(/\.\d+/, '').replace(' ', 'T');
  const zoned = /T/.test(withoutFraction) && !m[2] ? `${withoutFraction}Z` : withoutFraction;
  const ms = Date.parse(zoned);
  if (Number.isNaN(ms)) throw new TimeBoundError(`${name}: ${JSON.stringify(text)} is not a valid date`);
  return BigInt(ms) * 1_000_000n + BigInt(fraction.padEnd(9, '0') || '0');
}
