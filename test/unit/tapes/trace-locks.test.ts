/**
 * Trace locks: the full trace id decides the bucket, so 64-bit trace ids zero-padded to 128
 * bits (the left 8 bytes all zero) spread over the buckets as a uniform hash would, and one
 * transaction takes at most TRACE_LOCK_BUCKETS advisory locks however many traces it writes.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lockTraces, TRACE_LOCK_BUCKETS, traceLockBucket } from '../../../src/tapes/trace-store.js';
import { prng } from '../../helpers/prng.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../helpers/databases.js';

const random = prng(20_261_203);
const hex8 = () =>
  Math.floor(random() * 2 ** 32)
    .toString(16)
    .padStart(8, '0');
/** a 64-bit trace id as some SDKs send it: the left 8 bytes zero */
const zeroPadded = () => `${'0'.repeat(16)}${hex8()}${hex8()}`;

describe('trace lock buckets', () => {
  it('puts two zero-padded 64-bit trace ids in one bucket as often as a uniform hash would', () => {
    const pairs = 40_000;
    let same = 0;
    for (let i = 0; i < pairs; i++) {
      const [a, b] = [zeroPadded(), zeroPadded()];
      if (traceLockBucket(a) === traceLockBucket(b)) same++;
    }
    // expected pairs / TRACE_LOCK_BUCKETS (312.5); binomial sd ~17.6: a 5 sd band
    const expected = pairs / TRACE_LOCK_BUCKETS;
    expect(same).toBeGreaterThan(expected - 5 * Math.sqrt(expected));
    expect(same).toBeLessThan(expected + 5 * Math.sqrt(expected));
  });

  it('fills every bucket evenly from zero-padded ids (chi-square)', () => {
    const n = 128_000;
    const counts = new Array<number>(TRACE_LOCK_BUCKETS).fill(0);
    for (let i = 0; i < n; i++) counts[traceLockBucket(zeroPadded())]++;
    const expected = n / TRACE_LOCK_BUCKETS;
    const chi = counts.reduce((sum, c) => sum + (c - expected) ** 2 / expected, 0);
    // 127 degrees of freedom: mean 127, sd ~16; far above 127 + 6 sd means a skewed hash
    expect(chi).toBeLessThan(127 + 6 * 16);
  });
});

describe.each(databaseKinds)('advisory locks per transaction (%s)', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
  }, 120_000);
  afterAll(async () => {
    await t?.drop();
  });

  const locksHeld = (traceIds: string[]) =>
    t.db.transaction(async (tx) => {
      await lockTraces(tx, traceIds);
      const [row] = await tx.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND pid = pg_backend_pid()",
      );
      return row.n;
    });

  it('takes at most one lock per bucket for thousands of traces', async () => {
    const ids = Array.from({ length: 8192 }, () => randomBytes(16).toString('hex'));
    expect(await locksHeld(ids)).toBe(TRACE_LOCK_BUCKETS);
  });

  it('locks as many buckets as zero-padded trace ids hash to', async () => {
    const ids = Array.from({ length: 40 }, zeroPadded);
    expect(await locksHeld(ids)).toBe(new Set(ids.map(traceLockBucket)).size);
    expect(new Set(ids.map(traceLockBucket)).size).toBeGreaterThan(25);
  });
});
