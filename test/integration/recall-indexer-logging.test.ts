/**
 * While the database is unreachable, recall's background indexer fails every attempt of both
 * its loops (about twice a second): it logs the change to failing once, then at most once per
 * interval (a minute in serve) a count of the failures, and the recovery once. The database
 * is a real one wrapped to refuse every statement while `down` is set, as an unreachable
 * server's pool does (DatabaseUnavailableError); lines are counted through the logger.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { RecallIndexer } from '../../src/recall/recall-indexer.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { type Database, DatabaseUnavailableError } from '../../src/store/database.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { capturingLogger, START_TIMEOUT_MS, startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

/**
 * db, refusing every statement while switch.down is true; switch.attempts counts the refused
 * ones, less the erasure notices other replicas' erasures are read from (serve on PostgreSQL
 * reads them every second, apart from recall's indexer).
 */
function failing(db: Database, state: { down: boolean; attempts: number }): Database {
  const refuse = (sql?: string) => {
    if (!sql?.includes('erasure_notices')) state.attempts++;
    return Promise.reject(new DatabaseUnavailableError('PostgreSQL at test is unavailable: connect ECONNREFUSED'));
  };
  return {
    ...db,
    kind: db.kind,
    query: (sql, params, options) => (state.down ? refuse(sql) : db.query(sql, params, options)),
    exec: (sql) => (state.down ? refuse(sql) : db.exec(sql)),
    transaction: (fn) => (state.down ? refuse() : db.transaction(fn)),
    ping: () => db.ping(),
    close: () => db.close(),
  } as Database;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(check: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await sleep(50);
}

const recallLines = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => /recall's indexer|index stored steps for recall/.test(String(l.msg)));

describe.each(databaseKinds)("recall's indexer while the database is unreachable (%s)", (kind) => {
  let t: TestTapedeck | undefined;
  let d: TestDatabase | undefined;
  let indexer: RecallIndexer | undefined;

  afterEach(async () => {
    await indexer?.stop();
    await t?.close();
    await d?.drop();
    t = d = indexer = undefined;
  });

  it(
    'serve logs the failure once, not per attempt, and the recovery once',
    async () => {
      const state = { down: false, attempts: 0 };
      const log = capturingLogger();
      t = await startTestTapedeck(kind, {}, { logger: log.logger, wrapDb: (db) => failing(db, state) });
      state.down = true;
      await until(() => state.attempts >= 6, 10_000);
      expect(state.attempts).toBeGreaterThanOrEqual(6);
      const failingLines = recallLines(log.lines);
      expect(failingLines).toHaveLength(1);
      expect(failingLines[0].level).toBe(40);
      state.down = false;
      await until(() => recallLines(log.lines).length > 1, 5_000);
      await sleep(1_500);
      const after = recallLines(log.lines);
      expect(after).toHaveLength(2);
      expect(after[1]).toMatchObject({ level: 30, failures: expect.any(Number) });
      expect(after[1].failures as number).toBeGreaterThanOrEqual(6);
    },
    START_TIMEOUT_MS,
  );

  it('counts the failures in one line per interval while they go on', async () => {
    d = await createTestDatabase(kind);
    const state = { down: true, attempts: 0 };
    const log = capturingLogger();
    indexer = new RecallIndexer(failing(d.db, state), createMemoryPayloadStore(), {
      busy: () => false,
      maxLagMs: 30_000,
      logger: log.logger,
      reportEveryMs: 1_000,
    });
    indexer.start();
    await sleep(3_300);
    const lines = recallLines(log.lines);
    // the change to failing, then one count a second: three, four at most with timer slack
    expect(lines.length).toBeGreaterThanOrEqual(3);
    expect(lines.length).toBeLessThanOrEqual(4);
    const counted = lines.slice(1).reduce((n, l) => n + (l.failures as number), 0);
    expect(counted).toBeGreaterThan(0);
    expect(counted).toBeLessThanOrEqual(state.attempts - 1);
    expect(state.attempts).toBeGreaterThan(lines.length);
  }, 60_000);
});
