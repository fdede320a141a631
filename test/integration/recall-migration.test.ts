/**
 * Migration 0021 on a store written by the version before it (recall's words in rows of steps,
 * tapedeck_store.trace_words, and a backlog of steps to index): the old tables go, the reason
 * to reindex is recorded, and `tapedeck reindex` gives every step and message the words ingest
 * gives them now, so recall answers as on a store ingested today — on PGlite and PostgreSQL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { createRecallRoutes } from '../../src/recall/routes.js';
import { openStore, type Store } from '../../src/open-store.js';
import { reindex, reindexReasons } from '../../src/tapes/reindex.js';
import { appWith } from '../helpers/app.js';
import { databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { copyRows, databaseBefore } from '../helpers/store-before.js';
import { messagesWithAnswersWholeSql, stepsWithDigestListsSql } from '../helpers/digest-lists.js';
import {
  NOW_NS,
  openRecallFixture,
  PAYLOAD_THRESHOLD,
  pricing,
  recallRuns,
  type RecallFixture,
} from '../unit/recall/recall-fixtures.js';

const QUERIES = ['weather', 'drizzle', 'umbrella', 'get_weather', 'paris weather', '天气', '天气预报', 'nothing'];

describe.each(databaseKinds)('recall across migration 0021 on %s', (kind) => {
  let now: RecallFixture;
  let before: TestDatabase;
  let store: Store;
  const answer = async (s: Store, q: string) => {
    const app = appWith(
      createRecallRoutes({ db: s.db, payloads: s.payloads, pricing }, { queryDeadlineMs: 10_000, nowNs: () => NOW_NS }),
    );
    return (await app.request(`/v1/recall?q=${encodeURIComponent(q)}`)).text();
  };

  beforeAll(async () => {
    now = await openRecallFixture(kind, recallRuns);
    // The same spans, steps and messages as the version before 0021 wrote them (no words of
    // their own, lists of digests, answers whole), with a row of recall's old index and one of its backlog.
    before = await databaseBefore(kind, 'recall_by_message');
    for (const [table, drop] of [
      ['spans', ''],
      ['steps', " - 'words'"],
      ['messages', " - 'words' - 'id'"],
    ] as const)
      await copyRows(
        now.store.db,
        before.db,
        table,
        table === 'steps'
          ? stepsWithDigestListsSql(drop)
          : table === 'messages'
            ? messagesWithAnswersWholeSql(drop)
            : `SELECT (to_jsonb(t)${drop})::text AS j FROM tapedeck_store.${table} t`,
      );
    await before.db.query(
      `INSERT INTO tapedeck_store.trace_words (tenant, words, masks, trace_ids, span_ids, steps)
       VALUES ('', '{1,2}', '{1,1}', '\\x0102'::bytea, '\\x03'::bytea, 1)`,
    );
    await before.db.query(
      `INSERT INTO tapedeck_store.recall_backlog (tenant, trace_ids, span_ids, steps) VALUES ('', '\\x0102'::bytea, '\\x03'::bytea, 1)`,
    );
    const config = { ...loadConfig({}), payloadThresholdBytes: PAYLOAD_THRESHOLD };
    store = await openStore(config, silentLogger(), { db: before.db, payloads: createMemoryPayloadStore() });
  }, 240_000);
  afterAll(async () => {
    await now?.drop();
    await before?.drop();
  });

  it('drops the old index and its backlog, and records that a reindex is due', async () => {
    const [tables] = await before.db.query<{ words: string | null; backlog: string | null }>(
      `SELECT to_regclass('tapedeck_store.trace_words')::text AS words, to_regclass('tapedeck_store.recall_backlog')::text AS backlog`,
    );
    expect(tables).toEqual({ words: null, backlog: null });
    expect(await reindexReasons(before.db)).toEqual([expect.stringContaining('migration 21')]);
    const [nulls] = await before.db.query<{ steps: number; messages: number }>(
      `SELECT (SELECT count(*)::int FROM tapedeck_store.steps WHERE words IS NOT NULL) AS steps,
              (SELECT count(*)::int FROM tapedeck_store.messages WHERE words IS NOT NULL) AS messages`,
    );
    expect(nulls).toEqual({ steps: 0, messages: 0 });
    expect(JSON.parse(await answer(store, 'drizzle')).runs).toEqual([]);
  });

  it('after reindex holds the words ingest stores now, and answers every query as a store ingested now', async () => {
    await reindex(store.db, store.derive);
    expect(await reindexReasons(before.db)).toEqual([]);
    const words = (db: Store['db']) =>
      Promise.all([
        db.query(`SELECT tenant, trace_id, span_id, words::text AS words FROM tapedeck_store.steps ORDER BY 1, 2, 3`),
        db.query(`SELECT tenant, digest, words::text AS words FROM tapedeck_store.messages ORDER BY 1, 2`),
      ]);
    expect(await words(before.db)).toEqual(await words(now.store.db));
    for (const q of QUERIES) expect(await answer(store, q), q).toBe(await answer(now.store, q));
  });
});
