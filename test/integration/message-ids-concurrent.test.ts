/**
 * Two transactions storing the same new message (tapes/message-rows.ts insertMessages) end up
 * naming one row by one id: the second's look-up cannot see the first's uncommitted row, so its
 * INSERT meets it, waits for the first to commit, and then looks its id up, leaving the row as
 * the first wrote it (a new version would index its words again). On a PostgreSQL server
 * (PGlite has one connection: nothing runs concurrently).
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMessages } from '../../src/tapes/message-rows.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { signal } from '../helpers/signal.js';

const onServer = databaseKinds.includes('postgres');

describe.skipIf(!onServer)('the same new message stored by two transactions at once', () => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase('postgres');
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('is one row, and both transactions have its id', async () => {
    const text = '{"content":"Which platform for Lyon?","role":"user"}';
    const message = { digest: createHash('sha256').update(text).digest(), body: Buffer.from(text) };
    const digest = message.digest.toString('hex');
    const { fired: gate, fire: release } = signal();
    const { fired: firstStored, fire: stored } = signal();
    const first = t.db.transaction(async (tx) => {
      const ids = await insertMessages(tx, '', [message]);
      const [{ xid }] = await tx.query<{ xid: string }>('SELECT xid(pg_current_xact_id())::text AS xid');
      stored();
      await gate;
      return { ids, xid };
    });
    await firstStored;
    const second = t.db.transaction((tx) => insertMessages(tx, '', [message]));
    // the second waits on the first's row: its look-up found nothing, its INSERT met the row
    for (let waited = 0; ; waited += 20) {
      const [{ n }] = await t.db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
          WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'INSERT INTO tapedeck_store.messages%'`,
      );
      if (n === 1) break;
      if (waited > 10_000) throw new Error('the second transaction never waited on the first');
      await new Promise((r) => setTimeout(r, 20));
    }
    release();
    const [{ ids: a, xid }, b] = await Promise.all([first, second]);
    expect(a.get(digest)).toMatch(/^\d+$/);
    expect(b.get(digest)).toBe(a.get(digest));
    // one row, the version the first transaction wrote
    const rows = await t.db.query<{ id: string; xmin: string }>(
      'SELECT id::text AS id, xmin::text AS xmin FROM tapedeck_store.messages',
    );
    expect(rows).toEqual([{ id: a.get(digest), xmin: xid }]);
  });
});
