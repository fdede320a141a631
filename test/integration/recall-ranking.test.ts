/**
 * Recall ranks a query's words by the tables' statistics where they list a word as common and
 * clear of the rare/common line, and counts the rest (src/recall/common-words.ts,
 * rarestFirst in src/recall/query.ts); answers stay what they were without statistics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commonWords } from '../../src/recall/common-words.js';
import { queryWords, rarestFirst } from '../../src/recall/query.js';
import { createRecallRoutes } from '../../src/recall/routes.js';
import { queryTerms } from '../../src/recall/tokenize.js';
import type { Database } from '../../src/store/database.js';
import { appWith } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import { NOW_NS, openRecallFixture, pricing, recallRuns, type RecallFixture } from '../unit/recall/recall-fixtures.js';

const [LIGHTHOUSE] = queryWords(queryTerms('lighthouse'));
const [TIDE] = queryWords(queryTerms('tide'));
const [DRIZZLE] = queryWords(queryTerms('drizzle'));

/** The database as an object of its own (statistics are read once a minute per object), logging each statement. */
function logged(db: Database): { db: Database; log: { sql: string; params: readonly unknown[] }[] } {
  const log: { sql: string; params: readonly unknown[] }[] = [];
  const own: Database = {
    kind: db.kind,
    query: (sql, params = [], options) => {
      log.push({ sql, params });
      return db.query(sql, params, options);
    },
    exec: (sql) => db.exec(sql),
    transaction: (fn, options) => db.transaction(fn, options),
    ping: () => db.ping(),
    close: async () => {},
  };
  return { log, db: own };
}

const QUERIES = ['lighthouse drizzle', 'tide drizzle', 'weather Paris', 'drizzle umbrella', 'lighthouse tide'];

describe.each(databaseKinds)('recall ranking on %s', (kind) => {
  let fx: RecallFixture;
  const answers = async (db: Database) => {
    const app = appWith(
      createRecallRoutes(
        { db, payloads: fx.store.payloads, pricing },
        { queryDeadlineMs: 30_000, nowNs: () => NOW_NS },
      ),
    );
    const out: Record<string, string> = {};
    for (const q of QUERIES) out[q] = await (await app.request(`/v1/recall?q=${encodeURIComponent(q)}`)).text();
    return out;
  };
  let unanalyzed: Record<string, string>;
  beforeAll(async () => {
    fx = await openRecallFixture(kind, recallRuns);
    // Messages no step names (so no answer changes): `lighthouse` in 21,000, `tide` in 9,000.
    await fx.store.db.query(
      `INSERT INTO tapedeck_store.messages (tenant, digest, body, words)
       SELECT '', sha256(convert_to('ranking ' || g, 'UTF8')), '{}', CASE WHEN g <= 21000 THEN ARRAY[$1::bigint] ELSE ARRAY[$2::bigint] END
         FROM generate_series(1, 30000) AS g`,
      [LIGHTHOUSE, TIDE],
    );
    unanalyzed = await answers(logged(fx.store.db).db);
    await fx.store.db.exec('ANALYZE tapedeck_store.messages; ANALYZE tapedeck_store.steps');
  }, 60_000);
  afterAll(async () => {
    await fx?.drop();
  });

  it('reads nothing where the tables were never analyzed', async () => {
    const fresh = await openRecallFixture(kind, []);
    try {
      const words = await commonWords(logged(fresh.store.db).db);
      expect({ steps: words.steps.size, messages: words.messages.size }).toEqual({ steps: 0, messages: 0 });
    } finally {
      await fresh.drop();
    }
  });

  it('takes a word listed far above the line at its estimate, and counts the others', async () => {
    const { db, log } = logged(fx.store.db);
    const words = await commonWords(db);
    expect(words.messages.get(LIGHTHOUSE)).toBeGreaterThan(15_000);
    expect(words.messages.get(TIDE)).toBeGreaterThan(7_000);
    const ranked = await rarestFirst(db, '', [LIGHTHOUSE, TIDE, DRIZZLE]);
    const [{ n: lighthouseSteps }] = await fx.store.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM tapedeck_store.steps WHERE words @> ARRAY[$1::bigint]',
      [LIGHTHOUSE],
    );
    // the statistics, then one statement counting in each table only what they could not tell
    expect(log).toHaveLength(2);
    const [, unlisted, inSteps, , inMessages] = log[1].params as [string, string[], boolean[], number, boolean[]];
    const counted = Object.fromEntries(unlisted.map((w, i) => [w, { steps: inSteps[i], messages: inMessages[i] }]));
    expect(counted[LIGHTHOUSE]?.messages).toBe(false);
    expect(counted[TIDE]?.messages).toBe(true);
    expect(counted[DRIZZLE]?.messages).toBe(true);
    expect(ranked.words).toEqual([DRIZZLE, TIDE, LIGHTHOUSE]);
    // tide counted; lighthouse at the cap in messages, with its steps counted
    expect(ranked.counts.slice(1)).toEqual([9_000, 10_000 + Number(lighthouseSteps)]);
    expect(ranked.rare).toBe(2);
  });

  it('reads the statistics again after a minute, not before', async () => {
    const { db, log } = logged(fx.store.db);
    const now = Date.now();
    await commonWords(db, now);
    await commonWords(db, now + 59_000);
    expect(log).toHaveLength(1);
    await commonWords(db, now + 61_000);
    expect(log).toHaveLength(2);
  });

  it('answers every query as it did before the statistics', async () => {
    expect(await answers(logged(fx.store.db).db)).toEqual(unanalyzed);
  });
});
