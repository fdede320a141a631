/**
 * Replicas on one PostgreSQL database hear of each other's erasures (src/erasure/erasure-feed.ts):
 * a notice stored in an erasure's transaction reaches another replica's feed at its next
 * refresh, once, with its keys as recorded; an erasure that commits after a later-numbered
 * one is still heard of; the replica that recorded it does not count it twice.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErasureFeed, type ErasureNotice, storeNotice } from '../../src/erasure/erasure-feed.js';
import type { HeldContent } from '../../src/replay/settings.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

const held = (run: string, span = 'ab/cd'): HeldContent => ({
  tenant: 't1',
  run,
  traces: new Set(['ab']),
  spans: new Set([span]),
  payloads: new Set(),
});

describe.skipIf(!databaseKinds.includes('postgres'))('erasure notices across replicas', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('postgres');
  });
  afterAll(async () => t?.drop());

  const record = (notice: ErasureNotice) => t.db.transaction((tx) => storeNotice(tx, notice));

  it("hears of another replica's erasure at its next refresh, once, and tells its listeners", async () => {
    const here = new ErasureFeed(undefined, undefined, t.db);
    const there = new ErasureFeed(undefined, undefined, t.db);
    await there.refresh();
    let told = 0;
    there.subscribe(() => told++);
    const notice = { id: 'er_1', seq: 1n, runs: ['t1\u0000run-1'], spans: ['t1\u0000ab/ef'] };
    await record(notice);
    here.record(notice); // as the erasure route does on the replica that recorded it
    expect(there.covering(0n, held('run-1'))).toBeNull();

    await there.refresh();
    expect(there.covering(0n, held('run-1'))).toBe('er_1');
    expect(there.covering(0n, held('run-2', 'ab/ef'))).toBe('er_1');
    expect(there.covering(0n, held('run-2'))).toBeNull();
    expect(told).toBe(1);
    await there.refresh();
    expect(told).toBe(1);
    // the replica that recorded it reads it back without counting it again
    await here.refresh();
    expect(here.latest).toBe(1n);
  });

  it('hears of an erasure that commits after a later-numbered one was read', async () => {
    const feed = new ErasureFeed(undefined, undefined, t.db);
    await feed.refresh();
    const before = feed.latest;
    let commitSlow!: () => void;
    const slowMayCommit = new Promise<void>((resolve) => {
      commitSlow = resolve;
    });
    let slowStored!: () => void;
    const stored = new Promise<void>((resolve) => {
      slowStored = resolve;
    });
    // numbered first, committed last
    const slow = t.db.transaction(async (tx) => {
      await storeNotice(tx, { id: 'er_slow', seq: 10n, runs: ['t1\u0000slow-run'] });
      slowStored();
      await slowMayCommit;
    });
    await stored;
    await record({ id: 'er_fast', seq: 11n, runs: ['t1\u0000fast-run'] });
    await feed.refresh();
    expect(feed.covering(before, held('fast-run'))).toBe('er_fast');
    expect(feed.covering(before, held('slow-run'))).toBeNull();
    const seenFast = feed.latest;

    commitSlow();
    await slow;
    await feed.refresh();
    // numbered here after the one it followed in: a replay checked since then still sees it
    expect(feed.covering(seenFast, held('slow-run'))).toBe('er_slow');
  });
});
