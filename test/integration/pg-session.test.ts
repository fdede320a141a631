/**
 * Every session the PostgreSQL adapter opens runs without JIT or parallel plans, pooled or its
 * own (untimed transactions): statements the planner prices high but that read a few index
 * pages (a key probed in each of many day partitions) would otherwise be compiled, for seconds
 * each, or given workers. Pooled sessions stay open while idle, so a read after a pause meets
 * a warm backend. Statements marked `prepared` are prepared once per session, unless the
 * configuration turns that off (behind a pooler that cannot hold them). Values are parsed by
 * the adapter's own types, not by parsers an embedding app set on the driver.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, DatabaseUnavailableError, PREPARED, type Queryable } from '../../src/store/database.js';
import { createPgDatabase } from '../../src/store/pg-database.js';
import { openDatabase } from '../../src/open-store.js';
import { loadConfig } from '../../src/config.js';
import { createServerDatabase, databaseKinds } from '../helpers/databases.js';

const BYTEA_OID = 17;

describe.skipIf(!databaseKinds.includes('postgres'))('PostgreSQL sessions', () => {
  let db: Database;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const created = await createServerDatabase();
    drop = created.drop;
    db = createPgDatabase(created.url, { maxConnections: 2 });
  });
  afterAll(async () => {
    await db?.close();
    await drop?.();
  });

  it('run without JIT or parallel plans, on every connection of the pool and in untimed transactions', async () => {
    const settings = async (q: Pick<Database, 'query'>) =>
      (
        await q.query<{ s: string }>(
          "SELECT current_setting('jit') || ' ' || current_setting('max_parallel_workers_per_gather') AS s",
        )
      )[0].s;
    // two connections at once: both of the pool's
    const [a, b] = await Promise.all([
      db.transaction(async (tx) => {
        await tx.query('SELECT pg_sleep(0.05)');
        return settings(tx);
      }),
      db.transaction(async (tx) => {
        await tx.query('SELECT pg_sleep(0.05)');
        return settings(tx);
      }),
    ]);
    const untimed = await db.transaction((tx) => settings(tx), { untimed: true });
    expect({ a, b, pooled: await settings(db), untimed }).toEqual({
      a: 'off 0',
      b: 'off 0',
      pooled: 'off 0',
      untimed: 'off 0',
    });
  });

  it('read bytea as bytes in either output format, whatever parser the embedding app set for it', async () => {
    const global = pg.types.getTypeParser(BYTEA_OID, 'text');
    pg.types.setTypeParser(BYTEA_OID, 'text', () => 'the app parsed it');
    try {
      const read = (q: Pick<Database, 'query'>) =>
        q.query<{ b: Buffer }>("SELECT '\\x00ff5c78'::bytea AS b").then((rows) => rows[0].b);
      const hex = await read(db);
      const escaped = await db.transaction(async (tx) => {
        await tx.query("SET LOCAL bytea_output = 'escape'");
        return read(tx);
      });
      expect({ hex: Buffer.isBuffer(hex) && [...hex], escaped: Buffer.isBuffer(escaped) && [...escaped] }).toEqual({
        hex: [0x00, 0xff, 0x5c, 0x78],
        escaped: [0x00, 0xff, 0x5c, 0x78],
      });
    } finally {
      pg.types.setTypeParser(BYTEA_OID, 'text', global);
    }
  });

  it('keep their connections through a pause longer than the driver pool closes idle ones after', async () => {
    // two connections at once, so that both of the pool's are open
    const pids = async () =>
      (
        await Promise.all(
          [0, 1].map(() =>
            db.transaction(async (tx) => {
              await tx.query('SELECT pg_sleep(0.05)');
              return (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid'))[0].pid;
            }),
          ),
        )
      ).sort((x, y) => x - y);
    const before = await pids();
    // pg-pool closes a connection idle for 10 s unless told otherwise
    await new Promise((resolve) => setTimeout(resolve, 11_000));
    expect(await pids()).toEqual(before);
  }, 30_000);
});

describe.skipIf(!databaseKinds.includes('postgres'))('Prepared statements', () => {
  let url: string;
  let drop: () => Promise<void>;
  beforeAll(async () => {
    const created = await createServerDatabase();
    url = created.url;
    drop = created.drop;
  });
  afterAll(async () => {
    await drop?.();
  });

  const MARKED = 'SELECT $1::int + 1 AS n';
  const UNMARKED = 'SELECT $1::int * 2 AS n';
  const preparedHere = async (q: Queryable) =>
    (
      await q.query<{ statement: string }>(
        "SELECT statement FROM pg_prepared_statements WHERE name LIKE 'tapedeck\\_%' ORDER BY statement",
      )
    ).map((r) => r.statement);
  const open = (env: NodeJS.ProcessEnv) =>
    openDatabase({ ...loadConfig({ ...env, TAPEDECK_DATABASE_URL: url }, {}), dataDir: '' });

  it('are prepared once on a connection, in transactions and with a signal, and give the same rows', async () => {
    const db = await open({});
    try {
      const inTransaction = await db.transaction(async (tx) => {
        const rows = [
          await tx.query(MARKED, [1], PREPARED),
          await tx.query(MARKED, [2], PREPARED),
          await tx.query(MARKED, [3], { prepared: true, signal: new AbortController().signal }),
          await tx.query(UNMARKED, [4]),
        ];
        return { rows, prepared: await preparedHere(tx) };
      });
      expect(inTransaction).toEqual({
        rows: [[{ n: 2 }], [{ n: 3 }], [{ n: 4 }], [{ n: 8 }]],
        prepared: [MARKED],
      });
      // outside a transaction, with a signal: on whichever connection the pool gives, each time
      const signal = new AbortController().signal;
      for (let i = 0; i < 4; i++) expect(await db.query(MARKED, [i], { ...PREPARED, signal })).toEqual([{ n: i + 1 }]);
    } finally {
      await db.close();
    }
  });

  it('are not prepared with TAPEDECK_DATABASE_PREPARED_STATEMENTS=off, and give the same rows', async () => {
    const db = await open({ TAPEDECK_DATABASE_PREPARED_STATEMENTS: 'off' });
    try {
      const seen = await db.transaction(async (tx) => ({
        rows: [
          await tx.query(MARKED, [1], PREPARED),
          await tx.query(MARKED, [2], { ...PREPARED, signal: new AbortController().signal }),
        ],
        prepared: await preparedHere(tx),
      }));
      expect(seen).toEqual({ rows: [[{ n: 2 }], [{ n: 3 }]], prepared: [] });
    } finally {
      await db.close();
    }
  });

  it('are given up, as retryable, when the session loses one (a pooler that does not keep them)', async () => {
    const db = createPgDatabase(url, { maxConnections: 1 });
    try {
      expect(await db.query(MARKED, [1], PREPARED)).toEqual([{ n: 2 }]);
      // what a pooler in transaction mode does to a connection: its next transaction meets a
      // session that never prepared the statement
      await db.query('DEALLOCATE ALL');
      const lost = await db.transaction((tx) => tx.query(MARKED, [2], PREPARED)).catch((e: unknown) => e);
      expect(lost).toBeInstanceOf(DatabaseUnavailableError);
      expect((lost as Error).message).toMatch(/lost a prepared statement.*--database-prepared-statements off/);
      const after = await db.transaction(async (tx) => ({
        rows: [await tx.query(MARKED, [3], PREPARED), await tx.query(UNMARKED, [4], PREPARED)],
        prepared: await preparedHere(tx),
      }));
      expect(after).toEqual({ rows: [[{ n: 4 }], [{ n: 8 }]], prepared: [] });
    } finally {
      await db.close();
    }
  });
});
