/**
 * Recall's bounds (docs/api.md, GET /v1/recall: newest 5,000 matching spans, 100 runs read, 20,000 spans per
 * run, 200,000 matches refused, 40 skeleton entries), injected small; the one deadline; and
 * the words column filled again by reindex — on PGlite and on the PostgreSQL server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reindex } from '../../src/tapes/reindex.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { queryWords } from '../../src/recall/query.js';
import { deleteTraceWordsUpTo } from '../../src/recall/trace-words.js';
import { queryTerms } from '../../src/recall/tokenize.js';
import { databaseKinds } from '../helpers/databases.js';
import type { Queryable } from '../../src/store/database.js';
import { openRecallFixture, recallRuns, runIds, spansOf, type RecallFixture } from '../unit/recall/recall-fixtures.js';

describe.each(databaseKinds)('recall bounds on %s', (kind) => {
  let fx: RecallFixture;
  beforeAll(async () => {
    fx = await openRecallFixture(kind, recallRuns);
  });
  afterAll(async () => {
    await fx?.drop();
  });

  it('refuses words matching more spans than maxTotalMatches with 400, naming them', async () => {
    const { status, body } = await fx.get('?q=weather+Paris', { maxTotalMatches: 8 });
    expect(status).toBe(400);
    expect(body.error.type).toBe('query_too_broad');
    expect(body.error.message).toBe(
      'the words "weather", "paris" appear together in more than 8 spans: recall ranks every match ' +
        'to find the newest, so it refuses a query this broad. Add a word to narrow it.',
    );
    expect((await fx.get('?q=weather+Paris', { maxTotalMatches: 9 })).status).toBe(200);
    expect((await fx.get('?q=umbrella', { maxTotalMatches: 3 })).body.error.message).toMatch(
      /^the word "umbrella" appears in more than 3 spans/,
    );
  });

  it('groups only the newest maxMatchingSpans matches and says truncated', async () => {
    const { body } = await fx.get('?q=weather+Paris', { maxMatchingSpans: 2 });
    expect(body.truncated).toBe(true);
    expect(body.runs.map((r: { run: string; score: number }) => [r.run, r.score])).toEqual([
      ['active', 1],
      ['weather-failed', 1],
    ]);
    expect((await fx.get('?q=weather+Paris', { maxMatchingSpans: 9 })).body.truncated).toBe(false);
  });

  it('reads only the maxRunsRead runs with the most matches and says truncated', async () => {
    const { body } = await fx.get('?q=weather+Paris', { maxRunsRead: 1 });
    expect(runIds(body)).toEqual(['weather-failed']);
    expect(body.truncated).toBe(true);
    expect((await fx.get('?q=weather+Paris&limit=2', { maxRunsRead: 1 })).body.error.type).toBe('bad_input');
  });

  it('reads each run up to maxSpansPerRun spans: a longer run is truncated, unknown and without a cause', async () => {
    const { body } = await fx.get('?q=weather+Paris', { maxSpansPerRun: 3 });
    expect(runIds(body)).toEqual(['weather-failed', 'weather-ok', 'active']);
    const [failed, ok, active] = body.runs;
    expect(failed).toMatchObject({ outcome: 'unknown', truncated: true, score: 5, steps: 3 });
    expect('cause' in failed).toBe(false);
    expect(ok).toMatchObject({
      outcome: 'unknown',
      truncated: true,
      score: 3,
      steps: 3,
      skeleton: ['agent:planner', 'llm:gpt-4o', 'tool:get_weather'],
    });
    const whole = (await fx.get('?q=weather+Paris')).body.runs.find((r: { run: string }) => r.run === 'weather-ok');
    expect(ok.last_end_ns).toBe(whole.last_end_ns); // still the run's real end
    expect(active.truncated).toBe(false);
    expect((await fx.get('?q=weather+Paris&outcome=success', { maxSpansPerRun: 3 })).body.runs).toEqual([]);
  });

  it('keeps at most maxSkeletonEntries skeleton entries', async () => {
    const ok = (await fx.get('?q=umbrella', { maxSkeletonEntries: 3 })).body.runs[0];
    expect(ok.skeleton).toEqual(['agent:planner', 'llm:gpt-4o', 'tool:get_weather']);
    expect(ok.skeleton_truncated).toBe(true);
  });

  it('answers 400 deadline_exceeded when the work does not fit the budget', async () => {
    const { status, body } = await fx.get('?q=weather+Paris', { queryDeadlineMs: 0 });
    expect(status).toBe(400);
    expect(body.error.type).toBe('deadline_exceeded');
    expect(body.error.message).toMatch(/within its 0 ms budget \(--query-deadline-ms\)/);
  });

  it('keeps the words of steps stored while a reindex runs', async () => {
    let meanwhile: Promise<unknown> | null = null;
    let storedBeforeTheEnd = false;
    await reindex(fx.store.db, fx.store.derive, fx.store.payloads, {
      batchTraces: 1,
      onProgress: (p) => {
        if (meanwhile || p.tracesDone === 0) return;
        // a new run, written (with its words) after the reindex took its mark, before it ends
        meanwhile = ingestSpans(
          spansOf({ run: 'meanwhile', start: 300_000, steps: [{ llm: 'a quokka in Lyon' }] }),
          { tenant: '' },
          fx.store.ingest,
        ).then(() => {
          storedBeforeTheEnd = true;
        });
      },
    });
    expect(storedBeforeTheEnd).toBe(true);
    expect(runIds((await fx.get('?q=quokka')).body)).toEqual(['meanwhile']);
  });

  it('stores a step with more words than the cap, findable by its first words', async () => {
    const words = Array.from({ length: 150_000 }, (_, i) => `w${i}`).join(' ');
    await ingestSpans(
      spansOf({ run: 'huge', start: 200_000, steps: [{ tool: 'dump', args: { words } }] }),
      { tenant: '' },
      fx.store.ingest,
    );
    expect(runIds((await fx.get('?q=w10+w20000')).body)).toEqual(['huge']);
    expect((await fx.get('?q=w149999')).body.runs).toEqual([]); // past the per-step cap
  });

  it('finds nothing in steps without words (stored before 0006) until reindex derives them again', async () => {
    await fx.store.db.query('DELETE FROM tapedeck_store.trace_words');
    expect((await fx.get('?q=drizzle')).body.runs).toEqual([]);
    await reindex(fx.store.db, fx.store.derive, fx.store.payloads);
    expect(runIds((await fx.get('?q=drizzle')).body)).toEqual(['weather-ok']);
    // reindex leaves every step in one row of words (at its own bit, with its trace and span
    // ids), and no row naming a step that is not stored
    const [rows] = await fx.store.db.query<{ twice: bigint; stale: bigint; missing: bigint }>(
      `WITH entries AS (
         SELECT w.tenant, substring(w.trace_ids FROM b * 16 + 1 FOR 16) AS trace_id, substring(w.span_ids FROM b * 8 + 1 FOR 8) AS span_id
           FROM tapedeck_store.trace_words w CROSS JOIN LATERAL generate_series(0, w.steps - 1) AS b)
       SELECT (SELECT count(*) FROM (SELECT 1 FROM entries GROUP BY tenant, trace_id, span_id HAVING count(*) > 1) x) AS twice,
              (SELECT count(*) FROM entries e WHERE NOT EXISTS (
                 SELECT 1 FROM tapedeck_store.steps st WHERE st.tenant = e.tenant AND st.trace_id = e.trace_id AND st.span_id = e.span_id)) AS stale,
              (SELECT count(*) FROM tapedeck_store.steps st WHERE NOT EXISTS (
                 SELECT 1 FROM entries e WHERE e.tenant = st.tenant AND e.trace_id = st.trace_id AND e.span_id = st.span_id)) AS missing`,
    );
    expect(Number(rows.twice)).toBe(0);
    expect(Number(rows.stale)).toBe(0);
    expect(Number(rows.missing)).toBe(0);
  });

  it('drops the words written before a reindex once it has passed every trace', async () => {
    await reindex(fx.store.db, fx.store.derive, fx.store.payloads); // the rows as a reindex packs them
    // a row of words no step holds any more (a step re-derived with other text)
    await fx.store.db.query(
      `INSERT INTO tapedeck_store.trace_words (tenant, words, masks, trace_ids, span_ids, steps)
       SELECT st.tenant, $1::bigint[], '{1}', st.trace_id, st.span_id, 1 FROM tapedeck_store.steps st LIMIT 1`,
      [queryWords(queryTerms('quixotic'))],
    );
    expect(runIds((await fx.get('?q=quixotic')).body)).toHaveLength(1);
    const before = await fx.store.db.query<{ n: bigint }>('SELECT count(*) AS n FROM tapedeck_store.trace_words');
    await reindex(fx.store.db, fx.store.derive, fx.store.payloads);
    expect((await fx.get('?q=quixotic')).body.runs).toEqual([]);
    expect(runIds((await fx.get('?q=drizzle')).body)).toEqual(['weather-ok']);
    const after = await fx.store.db.query<{ n: bigint }>('SELECT count(*) AS n FROM tapedeck_store.trace_words');
    expect(Number(after[0].n)).toBe(Number(before[0].n) - 1);
  });

  it('drops the rows up to a mark block range by block range, and none after it', async () => {
    const mark = await seedBoundsRows(fx);
    const [{ blocks }] = await fx.store.db.query<{ blocks: number }>(
      `SELECT (pg_relation_size('tapedeck_store.trace_words') / current_setting('block_size')::bigint)::int AS blocks`,
    );
    expect(blocks).toBeGreaterThan(5); // so one block per statement takes several
    expect(await deleteTraceWordsUpTo(fx.store.db, BigInt(mark), 1)).toEqual({ byRange: 40, afterwards: 0 });
    await expectRowsAfterThenRestore(fx, mark);
  });

  it('drops the rows up to a mark with one more statement when the table is rewritten meanwhile', async () => {
    const mark = await seedBoundsRows(fx);
    // VACUUM FULL right after the first block range's DELETE: the rows left move down into
    // blocks the next statements have passed already
    let rewritten = false;
    const db: Queryable = {
      exec: (sql) => fx.store.db.exec(sql),
      query: async <Row>(sql: string, params?: readonly unknown[]) => {
        const rows = await fx.store.db.query<Row>(sql, params);
        if (!rewritten && sql.includes('DELETE')) {
          rewritten = true;
          await fx.store.db.exec('VACUUM FULL tapedeck_store.trace_words');
        }
        return rows;
      },
    };
    const { byRange, afterwards } = await deleteTraceWordsUpTo(db, BigInt(mark), 1);
    expect(rewritten).toBe(true);
    expect(afterwards).toBeGreaterThan(0); // rows the block ranges missed
    expect(byRange + afterwards).toBe(40);
    await expectRowsAfterThenRestore(fx, mark);
  });
});

/**
 * 40 rows of about 1.6 KiB (incompressible span ids, under the TOAST threshold: kept in the
 * table, a few per 8 KiB block), then 12 more; resolves with the last row_id of the 40.
 */
async function seedBoundsRows(fx: RecallFixture): Promise<string> {
  const insert = (n: number) =>
    fx.store.db.query(
      `INSERT INTO tapedeck_store.trace_words (tenant, words, masks, trace_ids, span_ids, steps)
     SELECT 'bounds', '{1}', '{1}', '\\x00'::bytea, decode(string_agg(md5(i::text || '.' || j::text), ''), 'hex'), 1
       FROM generate_series(1, $1) i, generate_series(1, 100) j GROUP BY i`,
      [n],
    );
  await fx.store.db.query('DELETE FROM tapedeck_store.trace_words');
  await insert(40);
  const [{ mark }] = await fx.store.db.query<{ mark: string }>(
    'SELECT max(row_id)::text AS mark FROM tapedeck_store.trace_words',
  );
  await insert(12);
  return mark;
}

/** Only the 12 rows after the mark are left; then the fixture's words as they were, for any test after. */
async function expectRowsAfterThenRestore(fx: RecallFixture, mark: string): Promise<void> {
  const left = await fx.store.db.query<{ row_id: string }>(
    'SELECT row_id::text FROM tapedeck_store.trace_words ORDER BY row_id',
  );
  expect(left).toHaveLength(12);
  expect(left.every((r) => BigInt(r.row_id) > BigInt(mark))).toBe(true);
  await fx.store.db.query("DELETE FROM tapedeck_store.trace_words WHERE tenant = 'bounds'");
  await reindex(fx.store.db, fx.store.derive, fx.store.payloads);
  expect(runIds((await fx.get('?q=drizzle')).body)).toEqual(['weather-ok']);
}
