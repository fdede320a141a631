/**
 * Recall's bounds (docs/api.md, GET /v1/recall: newest 5,000 matching spans, 100 runs read, 20,000 spans per
 * run, 200,000 matches refused, 40 skeleton entries), injected small; the one deadline; and
 * the words column filled again by reindex — on PGlite and on the PostgreSQL server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reindex } from '../../src/tapes/reindex.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { queryWords } from '../../src/recall/query.js';
import { queryTerms } from '../../src/recall/tokenize.js';
import { databaseKinds } from '../helpers/databases.js';
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
    await reindex(fx.store.db, fx.store.derive, {
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

  it('finds nothing in steps and messages without words (stored before 0021) until reindex derives them again', async () => {
    await fx.store.db.query('UPDATE tapedeck_store.steps SET words = NULL');
    await fx.store.db.query('UPDATE tapedeck_store.messages SET words = NULL');
    expect((await fx.get('?q=drizzle')).body.runs).toEqual([]);
    expect((await fx.get('?q=umbrella')).body.runs).toEqual([]);
    await reindex(fx.store.db, fx.store.derive);
    expect(runIds((await fx.get('?q=drizzle')).body)).toEqual(['weather-ok']);
    expect(runIds((await fx.get('?q=umbrella')).body)).toEqual(['weather-ok']);
    // reindex leaves every step and every message with its words
    const [rows] = await fx.store.db.query<{ steps: bigint; messages: bigint }>(
      `SELECT (SELECT count(*) FROM tapedeck_store.steps WHERE words IS NULL) AS steps,
              (SELECT count(*) FROM tapedeck_store.messages WHERE words IS NULL) AS messages`,
    );
    expect(Number(rows.steps)).toBe(0);
    expect(Number(rows.messages)).toBe(0);
  });

  it('replaces the words of a step that reindex derives again', async () => {
    // a step holding a word its text does not (as a step re-derived with other text would)
    await fx.store.db.query(
      `UPDATE tapedeck_store.steps SET words = words || $1::bigint[]
        WHERE (trace_id, span_id) = (SELECT trace_id, span_id FROM tapedeck_store.steps LIMIT 1)`,
      [queryWords(queryTerms('quixotic'))],
    );
    expect(runIds((await fx.get('?q=quixotic')).body)).toHaveLength(1);
    await reindex(fx.store.db, fx.store.derive);
    expect((await fx.get('?q=quixotic')).body.runs).toEqual([]);
    expect(runIds((await fx.get('?q=drizzle')).body)).toEqual(['weather-ok']);
  });
});
