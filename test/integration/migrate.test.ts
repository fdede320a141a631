/**
 * Migrations: applied once, recorded, and a database newer than the code refuses to start.
 * Runs on every adapter in databaseKinds.
 */
import { reindexReasons } from '../../src/tapes/reindex.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createServerDatabase, createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { createPgDatabase } from '../../src/store/pg-database.js';
import { isSchemaCurrent, loadMigrations, migrate, SchemaTooNewError } from '../../src/store/migrate.js';

/** The migration that made the message store: the stores written before it stop short of it. */
const messageStoreVersion = () => loadMigrations().find((m) => m.name === 'message_store')!.version;
/** The migration that dropped recall's rows of steps (trace_words) for words by message. */
const recallByMessageVersion = () => loadMigrations().find((m) => m.name === 'recall_by_message')!.version;
/** The migrations a store of recall's rows of steps went through. */
const beforeRecallByMessage = () => loadMigrations().filter((m) => m.version < recallByMessageVersion());

describe.each(databaseKinds)('migrations on %s', (kind) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.drop();
    t = undefined;
  });

  it('applies every migration once and records it', async () => {
    t = await createTestDatabase(kind, { migrated: false });
    expect(await isSchemaCurrent(t.db)).toBe(false);
    const first = await migrate(t.db);
    expect(first).toEqual(loadMigrations().map((m) => m.version));
    expect(await migrate(t.db)).toEqual([]);
    expect(await isSchemaCurrent(t.db)).toBe(true);
    const views = await t.db.query<{ table_name: string }>(
      "SELECT table_name FROM information_schema.views WHERE table_schema = 'tapedeck' ORDER BY table_name",
    );
    expect(views.map((v) => v.table_name)).toEqual(
      expect.arrayContaining(['logs', 'runs', 'spans', 'step_messages', 'tape_steps']),
    );
  });

  it('refuses a database written by a newer tapedeck, naming both versions', async () => {
    t = await createTestDatabase(kind);
    const known = loadMigrations().length;
    await t.db.query('INSERT INTO tapedeck_store.schema_migrations (version, name) VALUES ($1, $2)', [
      known + 1,
      'from_the_future',
    ]);
    const error = await migrate(t.db).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SchemaTooNewError);
    expect((error as Error).message).toContain(`migration ${known + 1}`);
    expect((error as Error).message).toContain(`up to ${known}`);
  });

  it('keeps the words of steps stored before recall was indexed by trace (0004)', async () => {
    t = await createTestDatabase(kind, { migrated: false });
    await migrate(
      t.db,
      loadMigrations().filter((m) => m.version <= 3),
    );
    await t.db.query(
      `INSERT INTO tapedeck_store.steps (trace_id, span_id, kind, name, status, fingerprint, layout, normalizer_version, search)
       VALUES ('\\x0102'::bytea, '\\x03'::bytea, 'llm', 'chat', 'ok', 'llm:chat#0', 'otel-genai', 1, array_to_tsvector('{weather,paris}'::text[]))`,
    );
    await migrate(
      t.db,
      loadMigrations().filter((m) => m.version <= 5),
    );
    const rows = await t.db.query<{ trace_id: Uint8Array; words: string }>(
      "SELECT trace_id, words::text AS words FROM tapedeck_store.trace_words WHERE words @@ 'paris'::tsquery",
    );
    expect(rows.map((r) => [Buffer.from(r.trace_id).toString('hex'), r.words])).toEqual([
      ['0102', "'paris' 'weather'"],
    ]);
  });

  it('keeps steps when words become hashes (0006), and records that they need reindex', async () => {
    t = await createTestDatabase(kind, { migrated: false });
    await migrate(
      t.db,
      loadMigrations().filter((m) => m.version <= 5),
    );
    expect(await reindexReasons(t.db).catch(() => 'no table')).toBe('no table');
    await t.db.query(
      `INSERT INTO tapedeck_store.steps (trace_id, span_id, kind, name, status, fingerprint, layout, normalizer_version, search)
       VALUES ('\\x0102'::bytea, '\\x03'::bytea, 'llm', 'chat', 'ok', 'llm:chat#0', 'otel-genai', 1, array_to_tsvector('{weather,paris}'::text[]))`,
    );
    await migrate(t.db, beforeRecallByMessage());
    const [counts] = await t.db.query<{ steps: bigint; words: bigint }>(
      'SELECT (SELECT count(*) FROM tapedeck_store.steps) AS steps, (SELECT count(*) FROM tapedeck_store.trace_words) AS words',
    );
    expect([Number(counts.steps), Number(counts.words)]).toEqual([1, 0]);
    expect(await reindexReasons(t.db)).toEqual([expect.stringContaining('migration 6')]);
  });

  it("names each step's trace in the rows of words written by trace (0008), and numbers the rows", async () => {
    t = await createTestDatabase(kind, { migrated: false });
    await migrate(
      t.db,
      loadMigrations().filter((m) => m.version <= 7),
    );
    await t.db.query(
      `INSERT INTO tapedeck_store.trace_words (trace_id, words, masks, span_ids, steps)
       VALUES ('\\x0102'::bytea, '{7,8}', '{1,3}', '\\x00000000000000030000000000000004'::bytea, 2)`,
    );
    await migrate(t.db, beforeRecallByMessage());
    const rows = await t.db.query<{ trace_ids: Uint8Array; span_ids: Uint8Array; row_id: bigint }>(
      'SELECT trace_ids, span_ids, row_id FROM tapedeck_store.trace_words',
    );
    expect(
      rows.map((r) => [
        Buffer.from(r.trace_ids).toString('hex'),
        Buffer.from(r.span_ids).toString('hex'),
        Number(r.row_id),
      ]),
    ).toEqual([['01020102', '00000000000000030000000000000004', 1]]);
  });

  it("keeps the steps' request and response text when they become text (0009), and the views read them as jsonb", async () => {
    t = await createTestDatabase(kind, { migrated: false });
    await migrate(
      t.db,
      loadMigrations().filter((m) => m.version <= 8),
    );
    await t.db.query(
      `INSERT INTO tapedeck_store.steps (trace_id, span_id, kind, name, status, fingerprint, layout, normalizer_version, request, response)
       VALUES ('\\x0102'::bytea, '\\x03'::bytea, 'llm', 'chat', 'ok', 'llm:chat#0', 'otel-genai', 1,
               '[{"content":"a\\u0000b","role":"user"}]'::json, NULL)`,
    );
    await migrate(
      t.db,
      loadMigrations().filter((m) => m.version < messageStoreVersion()),
    );
    const [row] = await t.db.query<{ type: string; request: string; response: string | null }>(
      `SELECT pg_typeof(request)::text AS type, request, response FROM tapedeck_store.steps`,
    );
    expect(row).toEqual({ type: 'text', request: '[{"content":"a\\u0000b","role":"user"}]', response: null });
    await migrate(t.db);
    // 0020 moves the list into the message store, escapes and all
    const [moved] = await t.db.query<{ request: string | null; text: string }>(
      `SELECT request, tapedeck_store.step_body(tenant, request, request_messages, NULL) AS text FROM tapedeck_store.steps`,
    );
    expect(moved).toEqual({ request: null, text: '[{"content":"a\\u0000b","role":"user"}]' });
    await t.db.query(`INSERT INTO tapedeck_store.spans (trace_id, span_id, name, kind, start_ns, end_ns, status_code, attributes, events, links, resource, run_id)
                      VALUES ('\\x0102'::bytea, '\\x03'::bytea, 'chat', 'client', 1, 2, 'unset', '{}', '[]', '[]', '{}', 'r1')`);
    const [view] = await t.db.query<{ request: unknown }>(`SELECT request FROM tapedeck.tape_steps WHERE run = 'r1'`);
    expect(view.request).toEqual([{ content: 'a\ufffdb', role: 'user' }]);
  });

  it('records no reason to reindex when 0006 meets no steps', async () => {
    t = await createTestDatabase(kind);
    expect(await reindexReasons(t.db)).toEqual([]);
  });

  it('returns int8 as bigint and bytea as bytes', async () => {
    t = await createTestDatabase(kind, { migrated: false });
    const [row] = await t.db.query<{ x: bigint; y: Uint8Array }>(
      "SELECT 1791964800010000001::int8 AS x, '\\x6162'::bytea AS y",
    );
    expect(row.x).toBe(1791964800010000001n);
    expect(Buffer.from(row.y).toString()).toBe('ab');
  });
});

/**
 * Replicas starting at once on one fresh database, through pools whose query timeout (1 s)
 * is shorter than a migration (a pg_sleep of 2 s after the real ones), on a database whose
 * own statement_timeout (1.5 s) is shorter too: both start, each migration is applied once,
 * and the one that waited for the other's lock was not timed out.
 */
describe.skipIf(!databaseKinds.includes('postgres'))('migrations from several replicas (postgres)', () => {
  it('migrate once, untimed, when two pools start on one fresh database together', async () => {
    const { url, drop } = await createServerDatabase();
    const setup = createPgDatabase(url);
    await setup.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET statement_timeout = '1500ms'`);
    await setup.close();
    const pools = [0, 1].map(() => createPgDatabase(url, { maxConnections: 2, queryTimeoutMillis: 1_000 }));
    try {
      const real = loadMigrations();
      const slow = { version: real.length + 1, name: 'slower_than_the_query_timeout', sql: 'SELECT pg_sleep(2)' };
      const migrations = [...real, slow];
      const applied = await Promise.all(pools.map((db) => migrate(db, migrations)));
      expect(applied.map((a) => a.length).sort((x, y) => x - y)).toEqual([0, migrations.length]);
      const rows = await pools[0].query<{ version: number; n: number }>(
        'SELECT version, count(*)::int AS n FROM tapedeck_store.schema_migrations GROUP BY version ORDER BY version',
      );
      expect(rows).toEqual(migrations.map((m) => ({ version: m.version, n: 1 })));
      // the pools' own statements are still timed, by the client and by the server
      await expect(pools[0].query('SELECT pg_sleep(2)')).rejects.toThrow();
      const [row] = await pools[1].query<{ t: string }>("SELECT current_setting('statement_timeout') AS t");
      expect(row.t).toBe('1500ms');
    } finally {
      await Promise.all(pools.map((db) => db.close()));
      await drop();
    }
  }, 60_000);
});
