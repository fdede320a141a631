/**
 * Recall finds runs by words from prompts, answers and tool arguments,
 * ranks a successful run above a failed one with more matches, folds skeleton repeats, and
 * finds Chinese and Arabic words — on PGlite and on the PostgreSQL server, through the
 * ingest core and GET /v1/recall. Bounds, the deadline and reindex: recall-bounds.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { conversationSpans } from '../helpers/conversation-spans.js';
import { databaseKinds } from '../helpers/databases.js';
import { openRecallFixture, recallRuns, runIds, type RecallFixture } from '../unit/recall/recall-fixtures.js';

describe.each(databaseKinds)('GET /v1/recall on %s', (kind) => {
  let fx: RecallFixture;
  beforeAll(async () => {
    fx = await openRecallFixture(kind, recallRuns);
  });
  afterAll(async () => {
    await fx?.drop();
  });

  it('ranks the successful run above the failed run with more matches, and answers the documented shape', async () => {
    const { status, body } = await fx.get('?q=weather+Paris');
    expect(status).toBe(200);
    expect(runIds(body)).toEqual(['weather-ok', 'weather-failed', 'active']);
    expect(body.truncated).toBe(false);
    const ok = body.runs[0];
    expect(Object.keys(ok)).toEqual([
      'cost_usd',
      'last_end_ns',
      'outcome',
      'outcome_source',
      'run',
      'score',
      'skeleton',
      'skeleton_truncated',
      'steps',
      'tenant',
      'truncated',
    ]);
    expect(ok).toMatchObject({
      run: 'weather-ok',
      tenant: null,
      outcome: 'success',
      outcome_source: 'derived',
      score: 3,
      steps: 7,
      cost_usd: 0.0009,
      skeleton_truncated: false,
      truncated: false,
    });
    expect(ok.skeleton).toEqual(['agent:planner', 'llm:gpt-4o', 'tool:get_weather', 'tool:search x3', 'llm:gpt-4o']);
    expect(typeof ok.last_end_ns).toBe('number');
    const failed = body.runs[1];
    expect(failed).toMatchObject({ outcome: 'failure', score: 5 });
    expect(failed.cause).toMatchObject({ index: 5, signature: 'tool:get_weather', status: 'error' });
  });

  it('finds words from prompts, answers, tool arguments and tool results, whole words only', async () => {
    expect(runIds((await fx.get('?q=umbrella+drizzle')).body)).toEqual(['weather-ok']); // arguments + answer
    expect(runIds((await fx.get('?q=DRIZZLE')).body)).toEqual(['weather-ok']); // a tool result, any case
    expect(runIds((await fx.get('?q=shops')).body)).toEqual(['weather-ok']);
    expect((await fx.get('?q=shop')).body.runs).toEqual([]); // whole words
    expect((await fx.get('?q=umbrella+zeppelin')).body.runs).toEqual([]); // every word, in one span
    // ...even where the other span is in the same trace (the index is by trace, the test by span)
    expect((await fx.get('?q=shops+reviews')).body.runs).toEqual([]);
    expect((await fx.get('?q=get_weather+reviews')).body.runs).toEqual([]);
    expect(runIds((await fx.get('?q=get_weather')).body)).toEqual(['weather-ok', 'weather-failed']); // a step name
  });

  it('does not search tool schemas or configuration', async () => {
    expect((await fx.get('?q=barometer')).body.runs).toEqual([]);
    expect((await fx.get('?q=read_barometer')).body.runs).toEqual([]);
    expect(runIds((await fx.get('?q=picnic')).body)).toEqual(['schema-only']);
  });

  it('finds a Chinese term inside a longer run of characters, in order', async () => {
    expect(runIds((await fx.get(`?q=${encodeURIComponent('天气预报')}`)).body)).toEqual([
      'chinese-apart',
      'chinese-offloaded',
      'chinese',
    ]);
    expect(runIds((await fx.get(`?q=${encodeURIComponent('北京天气')}`)).body)).toEqual(['chinese']);
    expect(runIds((await fx.get(`?q=${encodeURIComponent('小雨')}`)).body)).toEqual(['chinese']); // in the answer
    expect((await fx.get(`?q=${encodeURIComponent('北京下雨')}`)).body.runs).toEqual([]);
  });

  it('checks a long Chinese term in offloaded text, and refuses one whose pairs stand apart', async () => {
    const { body } = await fx.get(`?q=${encodeURIComponent('上海天气预报')}`);
    expect(runIds(body)).toEqual(['chinese-offloaded']); // chinese-apart holds 上海天 and 天气预报, not 上海天气预报
    // the run passed is summarized as any query finding it summarizes it (its end and outcome
    // read with the runs that failed the check)
    const { score: _score, ...summary } = body.runs[0];
    const alone = (await fx.get(`?q=${encodeURIComponent('天气预报')}`)).body.runs;
    expect(alone.find((r: { run: string }) => r.run === 'chinese-offloaded')).toMatchObject(summary);
    const [{ n }] = await fx.store.db.query<{ n: bigint }>(
      `SELECT count(*) AS n FROM tapedeck_store.steps WHERE request::text LIKE '%$payload%'`,
    );
    expect(Number(n)).toBeGreaterThan(0);
  });

  it('checks a long Chinese term in each message a conversation resends, never across two', async () => {
    const talk = await openRecallFixture(kind, []);
    try {
      const spans = conversationSpans({
        run: 'fc',
        system: '你是天气助手',
        questions: ['请查一下天气预报', '上海天', '气怎么样'],
        answer: (i) => `好的，第${i + 1}次`,
      });
      await ingestSpans(spans, { tenant: '' }, talk.store.ingest);
      // the first question, resent by every call
      expect((await talk.get(`?q=${encodeURIComponent('天气预报')}`)).body.runs).toMatchObject([
        { run: 'fc', score: 3 },
      ]);
      expect((await talk.get(`?q=${encodeURIComponent('上海天')}`)).body.runs).toMatchObject([{ run: 'fc', score: 2 }]);
      // calls 2 and 3 hold 上海, 海天 and 天气, each in some message, but 上海天气 in none
      expect((await talk.get(`?q=${encodeURIComponent('上海天气')}`)).body.runs).toEqual([]);
    } finally {
      await talk.drop();
    }
  });

  it('finds Arabic words, with or without their vowel marks', async () => {
    expect(runIds((await fx.get(`?q=${encodeURIComponent('القاهرة الطقس')}`)).body)).toEqual(['arabic']);
    expect(runIds((await fx.get(`?q=${encodeURIComponent('مُشْمِس')}`)).body)).toEqual(['arabic']);
    expect(runIds((await fx.get(`?q=${encodeURIComponent('غدا')}`)).body)).toEqual(['arabic']);
  });

  it('keeps only the outcome asked for; an active run is unknown, never a success', async () => {
    expect(runIds((await fx.get('?q=weather+Paris&outcome=success')).body)).toEqual(['weather-ok']);
    expect(runIds((await fx.get('?q=weather+Paris&outcome=failure')).body)).toEqual(['weather-failed']);
    const active = (await fx.get('?q=zeppelin')).body.runs[0];
    expect(active).toMatchObject({ run: 'active', outcome: 'unknown' });
    expect('cause' in active).toBe(false);
    expect(runIds((await fx.get('?q=weather+Paris&limit=1')).body)).toEqual(['weather-ok']);
  });

  it('answers 400 bad_input for a missing or wordless query, a bad outcome or a bad limit', async () => {
    for (const q of [
      '',
      '?q=',
      '?q=+',
      '?q=%3F%21',
      '?q=a&outcome=maybe',
      '?q=a&limit=0',
      '?q=a&limit=101',
      `?q=${'x'.repeat(101)}`,
    ]) {
      const { status, body } = await fx.get(q);
      expect([q, status, body.error.type]).toEqual([q, 400, 'bad_input']);
    }
    expect((await fx.get('?q=a&outcome=maybe')).body.error.message).toBe(
      'outcome must be success, failure or any, got "maybe"',
    );
  });
});
