/**
 * A statement whose request's deadline passes is stopped, and the database is usable right
 * after. PostgreSQL cancels it on the server. PGlite in a data directory runs in a worker
 * thread that is replaced when a running statement's deadline passes; an in-memory PGlite,
 * which cannot interrupt a statement it has started, drops the statements whose deadlines
 * passed while they waited behind one.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Deadline, DeadlineExceeded } from '../../src/deadline/deadline.js';
import type { Database } from '../../src/store/database.js';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { databaseKinds, createTestDatabase, type TestDatabase } from '../helpers/databases.js';

describe.each(databaseKinds)('statement cancellation on %s', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind, { migrated: false });
    await t.db.exec('CREATE TABLE marks (n int)');
  });
  afterAll(async () => {
    await t?.drop();
  });

  it.runIf(kind === 'postgres')(
    'cancels a slow statement on the server when its deadline passes; the next query runs',
    async () => {
      const deadline = new Deadline(200);
      const slow = t.db.query('SELECT pg_sleep(20)', [], { signal: deadline.signal });
      await expect(slow).rejects.toBeInstanceOf(DeadlineExceeded);
      // Cancelled on the server, not just abandoned by the client.
      let running = 1;
      for (let i = 0; i < 100 && running > 0; i++) {
        const [row] = await t.db.query<{ n: bigint }>(
          "SELECT count(*) AS n FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(20)' AND state = 'active'",
        );
        running = Number(row.n);
        if (running > 0) await new Promise((r) => setTimeout(r, 50));
      }
      expect(running).toBe(0);
      expect(await t.db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    },
    15_000,
  );

  it.runIf(kind === 'postgres')(
    'cancels a statement of a transaction; the transaction rolls back and the pool stays usable',
    async () => {
      const deadline = new Deadline(200);
      const tx = t.db.transaction(async (q) => {
        await q.query('INSERT INTO marks VALUES (7)');
        await q.query('SELECT pg_sleep(20)', [], { signal: deadline.signal });
      });
      await expect(tx).rejects.toBeInstanceOf(DeadlineExceeded);
      expect(await t.db.query('SELECT n FROM marks WHERE n = 7')).toEqual([]);
      expect(await t.db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    },
    15_000,
  );

  it.runIf(kind === 'pglite')(
    'never starts a statement whose deadline passed while it waited; the one after runs',
    async () => {
      const first = t.db.query('SELECT pg_sleep(0.4)');
      const late = t.db.query('INSERT INTO marks VALUES (1)', [], { signal: new Deadline(50).signal });
      const after = t.db.query('INSERT INTO marks VALUES (2) RETURNING n');
      await first;
      await expect(late).rejects.toBeInstanceOf(DeadlineExceeded);
      expect(await after).toEqual([{ n: 2 }]);
      expect(await t.db.query('SELECT n FROM marks ORDER BY n')).toEqual([{ n: 2 }]);
    },
  );

  it('refuses a statement whose signal has already aborted, without running it', async () => {
    const deadline = new Deadline(1000);
    deadline.release();
    await expect(t.db.query('INSERT INTO marks VALUES (3)', [], { signal: deadline.signal })).rejects.toBeInstanceOf(
      DeadlineExceeded,
    );
    expect(await t.db.query('SELECT n FROM marks WHERE n = 3')).toEqual([]);
  });
});

describe('statement cancellation on PGlite in a data directory', () => {
  let dir: string;
  let db: Database;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'tapedeck-cancel-'));
    db = await createPgliteDatabase(path.join(dir, 'pglite'));
    await db.exec('CREATE TABLE marks (n int)');
    await db.query('INSERT INTO marks VALUES (1)');
  }, 60_000);
  afterAll(async () => {
    await db?.close();
    await rm(dir, { recursive: true, force: true });
  });

  // Long enough that the test would run for tens of seconds if the statement were not stopped.
  const SLOW = 'SELECT count(*) FROM generate_series(1, 2000000000)';

  it('stops a running statement when its deadline passes; what was committed stays and the next query runs', async () => {
    const answered = Promise.race([
      db.query(SLOW, [], { signal: new Deadline(300).signal }).then(
        () => 'finished',
        (error) => error,
      ),
      new Promise((resolve) => setTimeout(() => resolve('still running'), 20_000)),
    ]);
    expect(await answered).toBeInstanceOf(DeadlineExceeded);
    expect(await db.query('SELECT n FROM marks')).toEqual([{ n: 1 }]);
  }, 60_000);

  it('stops a running statement of a transaction, which then leaves nothing behind', async () => {
    const tx = db.transaction(async (q) => {
      await q.query('INSERT INTO marks VALUES (2)');
      await q.query(SLOW, [], { signal: new Deadline(300).signal });
    });
    await expect(tx).rejects.toBeInstanceOf(DeadlineExceeded);
    expect(await db.query('SELECT n FROM marks ORDER BY n')).toEqual([{ n: 1 }]);
    await db.transaction(async (q) => {
      await q.query('INSERT INTO marks VALUES (3)');
    });
    expect(await db.query('SELECT n FROM marks ORDER BY n')).toEqual([{ n: 1 }, { n: 3 }]);
  }, 60_000);
});
