/**
 * Recall's index written after the steps' transaction (src/recall/backlog.ts,
 * recall-indexer.ts): what ingest records, what indexing writes and when, exactly once, on
 * PGlite and on the PostgreSQL server.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { enqueueSteps, indexBacklogRow } from '../../src/recall/backlog.js';
import { drainBacklog, indexUpTo, RecallIndexer } from '../../src/recall/recall-indexer.js';
import type { PayloadStore } from '../../src/payloads/payload-store.js';
import { createRecallRoutes } from '../../src/recall/routes.js';
import type { Queryable } from '../../src/store/database.js';
import { databaseKinds } from '../helpers/databases.js';
import { openRecallFixture, spansOf, type RecallFixture, type RunSpec } from '../unit/recall/recall-fixtures.js';

const run = (name: string, word: string, start: number): RunSpec => ({
  run: name,
  start,
  steps: [
    { llm: `what is the ${word} forecast`, answer: `rain in ${word}` },
    { tool: 'get_weather', args: { city: word } },
  ],
});
// three steps each: the agent span and the two above
const STEPS_PER_RUN = 3;

async function counts(db: Queryable): Promise<{ backlogRows: number; backlogSteps: number; indexedSteps: number }> {
  const [row] = await db.query<{ r: number; b: number; i: number }>(
    `SELECT (SELECT count(*) FROM tapedeck_store.recall_backlog)::int AS r,
            (SELECT coalesce(sum(steps), 0) FROM tapedeck_store.recall_backlog)::int AS b,
            (SELECT coalesce(sum(steps), 0) FROM tapedeck_store.trace_words)::int AS i`,
  );
  return { backlogRows: row.r, backlogSteps: row.b, indexedSteps: row.i };
}

async function until(check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`not within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe.each(databaseKinds)('recall backlog on %s', (kind) => {
  let fx: RecallFixture;
  const ingest = (spec: RunSpec) => ingestSpans(spansOf(spec), { tenant: '' }, fx.store.ingest);
  beforeAll(async () => {
    fx = await openRecallFixture(kind, []);
  });
  afterAll(async () => {
    await fx?.drop();
  });
  beforeEach(async () => {
    await fx.store.db.query(
      'TRUNCATE tapedeck_store.spans, tapedeck_store.steps, tapedeck_store.trace_words, tapedeck_store.recall_backlog',
    );
  });

  it('records the steps a transaction wrote, without their words; indexing writes the words and empties the backlog', async () => {
    await ingest(run('paris', 'paris', 0));
    expect(await counts(fx.store.db)).toEqual({ backlogRows: 1, backlogSteps: STEPS_PER_RUN, indexedSteps: 0 });

    await drainBacklog(fx.store.db, fx.store.payloads);
    expect(await counts(fx.store.db)).toEqual({ backlogRows: 0, backlogSteps: 0, indexedSteps: STEPS_PER_RUN });
    const { body } = await fx.get('?q=paris+forecast');
    expect(body.runs.map((r: { run: string }) => r.run)).toEqual(['paris']);
    expect(body.unindexed_steps).toBe(0);
  });

  it('catches up before answering: a run stored a moment ago is found, with nothing indexed in the background', async () => {
    await ingest(run('lyon', 'lyon', 0));
    const { body } = await fx.get('?q=lyon');
    expect(body.runs.map((r: { run: string }) => r.run)).toEqual(['lyon']);
    expect(body.unindexed_steps).toBe(0);
    expect(await counts(fx.store.db)).toMatchObject({ backlogRows: 0, indexedSteps: STEPS_PER_RUN });
  });

  it('indexes each step once when several indexers take rows at once', async () => {
    for (let i = 0; i < 4; i++) await ingest(run(`r${i}`, `city${i}`, i * 1000));
    const { db, payloads } = fx.store;
    const taken = await Promise.all(
      Array.from({ length: 3 }, () => indexBacklogRow(db, payloads, { skipLocked: true })),
    );
    expect(taken.filter((n) => n !== null).length).toBeGreaterThan(0);
    await drainBacklog(db, payloads);
    expect(await counts(db)).toEqual({ backlogRows: 0, backlogSteps: 0, indexedSteps: 4 * STEPS_PER_RUN });
  });

  it('leaves a row whose indexing failed for the next attempt, and loses none of its steps', async () => {
    await ingest(run('offloaded', `${'verylongword '.repeat(400)}marseille`, 0)); // over the fixture's 2 KiB threshold
    const [{ n }] = await fx.store.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM tapedeck_store.steps WHERE request::text LIKE '%$payload%'`,
    );
    expect(n).toBeGreaterThan(0);
    const failing: PayloadStore = {
      ...fx.store.payloads,
      get: async () => {
        throw new Error('payload disk unreachable');
      },
    };
    await expect(indexBacklogRow(fx.store.db, failing, { skipLocked: true })).rejects.toThrow(
      'payload disk unreachable',
    );
    expect(await counts(fx.store.db)).toEqual({ backlogRows: 1, backlogSteps: STEPS_PER_RUN, indexedSteps: 0 });
    // recall answers from the index as it is, and says what it could not search
    const app = createRecallRoutes({ db: fx.store.db, payloads: failing, pricing: null }, { queryDeadlineMs: 10_000 });
    const res = await app.request('/v1/recall?q=marseille');
    expect(res.status).toBe(200);
    expect(JSON.parse(await res.text())).toEqual({ runs: [], truncated: false, unindexed_steps: STEPS_PER_RUN });

    await drainBacklog(fx.store.db, fx.store.payloads);
    expect(await counts(fx.store.db)).toMatchObject({ backlogRows: 0, indexedSteps: STEPS_PER_RUN });
    // the words of the offloaded text, read in full from the payload store
    expect((await fx.get('?q=marseille')).body.runs.map((r: { run: string }) => r.run)).toEqual(['offloaded']);
  });

  it('finishes a row whose steps are gone (erased, or no longer steps) with nothing to index', async () => {
    await fx.store.db.transaction((tx) => enqueueSteps(tx, '', [{ traceId: 'f'.repeat(32), spanId: 'e'.repeat(16) }]));
    expect(await indexBacklogRow(fx.store.db, fx.store.payloads, { skipLocked: true })).toBe(1);
    expect(await counts(fx.store.db)).toEqual({ backlogRows: 0, backlogSteps: 0, indexedSteps: 0 });
  });

  it('stops catching up when its signal aborts, and says how many steps are left', async () => {
    await ingest(run('a', 'nice', 0));
    await ingest(run('b', 'nantes', 1000));
    const aborted = AbortSignal.abort();
    expect(await indexUpTo(fx.store.db, fx.store.payloads, 1_000_000n, aborted)).toBe(2 * STEPS_PER_RUN);
    expect((await counts(fx.store.db)).indexedSteps).toBe(0);
  });

  describe('in the background', () => {
    let indexer: RecallIndexer | undefined;
    afterEach(async () => {
      await indexer?.stop();
      indexer = undefined;
    });
    const start = (busy: () => boolean, maxLagMs: number, turn?: <T>(work: () => Promise<T>) => Promise<T>) => {
      const errors: unknown[] = [];
      const logger = { warn: (o: unknown) => errors.push(o), info: () => {} };
      indexer = new RecallIndexer(fx.store.db, fx.store.payloads, { busy, maxLagMs, logger, turn });
      indexer.start();
      return errors;
    };

    it('waits while ingest is busy, and indexes once it pauses', async () => {
      let busy = true;
      const errors = start(() => busy, 60_000);
      await ingest(run('busy', 'toulouse', 0));
      await new Promise((resolve) => setTimeout(resolve, 400));
      expect(await counts(fx.store.db)).toMatchObject({ backlogRows: 1, indexedSteps: 0 });
      busy = false;
      await until(async () => (await counts(fx.store.db)).backlogRows === 0);
      expect((await counts(fx.store.db)).indexedSteps).toBe(STEPS_PER_RUN);
      expect(errors).toEqual([]);
    });

    it('indexes while ingest stays busy once a row has waited the maximum lag', async () => {
      const errors = start(() => true, 300);
      await ingest(run('lagging', 'bordeaux', 0));
      await until(async () => (await counts(fx.store.db)).backlogRows === 0);
      expect((await counts(fx.store.db)).indexedSteps).toBe(STEPS_PER_RUN);
      expect(errors).toEqual([]);
    });

    it("indexes a due row in a turn of ingest's queue while ingest is busy, and freely when idle", async () => {
      let busy = true;
      let turns = 0;
      const errors = start(
        () => busy,
        300,
        (work) => {
          turns++;
          return work();
        },
      );
      await ingest(run('queued', 'lyon', 0));
      await until(async () => (await counts(fx.store.db)).backlogRows === 0);
      expect(turns).toBeGreaterThan(0);
      busy = false;
      const before = turns;
      await ingest(run('idle', 'lille', 0));
      await until(async () => (await counts(fx.store.db)).backlogRows === 0);
      expect(turns).toBe(before);
      expect((await counts(fx.store.db)).indexedSteps).toBe(2 * STEPS_PER_RUN);
      expect(errors).toEqual([]);
    });
  });
});
