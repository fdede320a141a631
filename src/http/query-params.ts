/**
 * @module http/query-params
 * Path and query-string values read the same way on every route; a bad one is 400 bad_input naming
 * the parameter, the accepted values and what was sent.
 */
import { ApiError } from '../errors.js';
import { storableString } from '../spans/storable-text.js';

/**
 * A run id from a request, spelled as the store holds it. Ingest stores NUL and lone
 * surrogates as U+FFFD (spans/storable-text.ts); the same replacement here finds that run,
 * and never hands the database a character it refuses.
 */
export function storedRunId(raw: string): string {
  return storableString(raw);
}

/** Absent, empty, false or 0 is false; true or 1 is true. */
export function parseBoolean(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new ApiError('bad_input', `${name} must be true or false, got ${JSON.stringify(value)}`);
}

/** A whole number from min to max; absent or empty is the fallback. */
export function parseLimit(
  value: string | undefined,
  name: string,
  bounds: { fallback: number; min: number; max: number },
): number {
  if (value === undefined || value === '') return bounds.fallback;
  const n = Number(value);
  if (!/^\d+$/.test(value) || n < bounds.min || n > bounds.max) {
    throw new ApiError(
      'bad_input',
      `${name} must be a whole number from ${bounds.min} to ${bounds.max}, got ${JSON.stringify(value)}`,
    );
  }
  return n;
}
