/**
 * Trace locks: the full trace id decides the bucket, so 64-bit trace ids zero-padded to 128
 * bits (the left 8 bytes all zero) spread over the buckets as a uniform hash would; one
 * transaction takes at most TRACE_LOCK_BUCKETS advisory locks however many traces it writes;
 * transactions of different traces go on at once, and two holding one trace take turns
 * whichever way each locked it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FINE_LOCK_TRACES,
  lockTraces,
  TRACE_LOCK_BUCKETS,
  traceLockBucket,
  tryLockTraces,
} from '../../../src/tapes/trace-store.js';
import { prng } from '../../helpers/prng.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../../helpers/databases.js';
import { holdTransaction } from '../../helpers/held-locks.js';

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

  it('locks a few traces one by one, under their buckets', async () => {
    const ids = Array.from({ length: 40 }, zeroPadded);
    expect(await locksHeld([...ids, ...ids])).toBe(new Set(ids.map(traceLockBucket)).size + 40);
    expect(new Set(ids.map(traceLockBucket)).size).toBeGreaterThan(25);
  });

  it('stays within TRACE_LOCK_BUCKETS at the most traces it locks one by one', async () => {
    const ids = Array.from({ length: FINE_LOCK_TRACES }, () => randomBytes(16).toString('hex'));
    expect(await locksHeld(ids)).toBeLessThanOrEqual(TRACE_LOCK_BUCKETS);
  });
});

const onServer = databaseKinds.includes('postgres') ? describe : describe.skip;

onServer('trace locks between transactions (postgres)', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('postgres');
  }, 120_000);
  afterAll(async () => {
    await t?.drop();
  });

  const traces = (n: number) => Array.from({ length: n }, () => randomBytes(16).toString('hex'));

  /** Runs `meanwhile` while another transaction holds `first`'s locks. */
  async function whileHeld<T>(first: string[], meanwhile: () => Promise<T>): Promise<T> {
    const holder = await holdTransaction(t.db, (tx) => lockTraces(tx, first));
    try {
      return await meanwhile();
    } finally {
      await holder.release();
    }
  }

  /**
   * Holds `first`'s locks while a second transaction locks `second`: resolves true when the
   * second had to wait (lock_timeout ran out), false when it got its locks at once.
   */
  function waits(first: string[], second: string[]): Promise<boolean> {
    return whileHeld(first, async () => {
      try {
        await t.db.transaction(async (tx) => {
          await tx.query("SET LOCAL lock_timeout = '300ms'");
          await lockTraces(tx, second);
        });
        return false;
      } catch (error) {
        if ((error as { code?: string }).code === '55P03' || /lock timeout/.test(String(error))) return true;
        throw error;
      }
    });
  }

  it('lets two requests of different traces write at once, though they share buckets', async () => {
    const [a, b] = [traces(FINE_LOCK_TRACES), traces(FINE_LOCK_TRACES)];
    const shared = a.filter((x) => b.some((y) => traceLockBucket(x) === traceLockBucket(y)));
    expect(shared.length).toBeGreaterThan(0);
    expect(await waits(a, b)).toBe(false);
  });

  it('makes two requests holding one trace take turns, locked one by one', async () => {
    const [a, b] = [traces(10), traces(10)];
    expect(await waits(a, [...b, a[3]])).toBe(true);
  });

  it('makes a large batch and a small request holding one trace take turns, either first', async () => {
    const large = traces(FINE_LOCK_TRACES * 4);
    expect(await waits(large, [...traces(5), large[7]])).toBe(true);
    expect(await waits([...traces(5), large[9]], large)).toBe(true);
  });

  /** Holds `first`'s locks while a second transaction tries `second`'s: what it could not lock. */
  function contested(first: string[], second: string[]) {
    return whileHeld(first, () =>
      t.db.transaction(async (tx) => {
        const found = await tryLockTraces(tx, second);
        // what it took is taken: a third transaction trying it gets nothing
        const free = second.filter((x) => !found.traceIds.includes(x));
        const third = await t.db.transaction((other) => tryLockTraces(other, free));
        expect(third.traceIds.sort()).toEqual([...new Set(free)].sort());
        return found;
      }),
    );
  }

  it('tries a few traces one by one: only the held one is contested', async () => {
    const [a, b] = [traces(10), traces(10)];
    expect(await contested(a, [...b, a[3], b[0]])).toEqual({ traceIds: [a[3]], coarse: false });
  });

  it('tries a large batch by bucket: the traces in a held bucket are contested', async () => {
    const large = traces(FINE_LOCK_TRACES * 4);
    const held = traces(3);
    const heldBuckets = new Set(held.map(traceLockBucket));
    const found = await contested(held, large);
    expect(found.coarse).toBe(true);
    expect(found.traceIds.sort()).toEqual(large.filter((x) => heldBuckets.has(traceLockBucket(x))).sort());
  });

  it('lets a large batch and a small request of other buckets write at once', async () => {
    const large = traces(FINE_LOCK_TRACES * 4);
    const taken = new Set(large.map(traceLockBucket));
    const elsewhere = traces(2000)
      .filter((x) => !taken.has(traceLockBucket(x)))
      .slice(0, 3);
    expect(elsewhere.length).toBe(3);
    expect(await waits(large, elsewhere)).toBe(false);
  });
});
