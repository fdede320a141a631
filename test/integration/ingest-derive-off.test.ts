/**
 * --derive off (TAPEDECK_DERIVE=off): the receiver keeps every span and log record, writes no
 * steps or runs, and records that `tapedeck reindex` has work; reindex then derives exactly
 * what a tapedeck deriving at ingest stored for the same captures.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import { UNDERIVED_REASON } from '../../src/ingest/write-spans.js';
import { reindex, reindexReasons } from '../../src/tapes/reindex.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const STEPS = `SELECT * FROM tapedeck.tape_steps ORDER BY trace_id, span_id`;
const SPANS = `SELECT trace_id, span_id, name, attributes, own_run, own_parent_run, run_id, parent_run
  FROM tapedeck_store.spans ORDER BY trace_id, span_id`;
type RunsPage = { runs: { run: string }[] };
const runsOf = async (t: TestTapedeck): Promise<RunsPage> =>
  (await fetch(`${t.url}/v1/runs?limit=1000`)).json() as Promise<RunsPage>;

const COUNTS = `SELECT (SELECT count(*) FROM tapedeck_store.spans)::int AS spans, (SELECT count(*) FROM tapedeck_store.logs)::int AS logs,
  (SELECT count(*) FROM tapedeck_store.steps)::int AS steps, (SELECT count(*) FROM tapedeck.runs)::int AS runs`;

describe.each(databaseKinds)('--derive off on %s', (kind) => {
  let deriving: TestTapedeck;
  let spansOnly: TestTapedeck;
  beforeAll(async () => {
    deriving = await startTestTapedeck(kind);
    spansOnly = await startTestTapedeck(kind, { derive: false });
    for (const ref of listCaptures()) {
      const capture = await loadCapture(ref);
      for (const t of [deriving, spansOnly]) {
        // Logs first for half the captures: content that arrives before its span, too.
        if (capture.logs.length > 0 && ref.scenario.length % 2 === 0)
          await ingestLogs(capture.logs, { tenant: '' }, t.running.store.ingest);
        await ingestSpans(capture.spans, { tenant: '' }, t.running.store.ingest);
        if (capture.logs.length > 0 && ref.scenario.length % 2 === 1)
          await ingestLogs(capture.logs, { tenant: '' }, t.running.store.ingest);
      }
    }
  }, 120_000);
  afterAll(async () => {
    await deriving?.close();
    await spansOnly?.close();
  });

  it('keeps every span and log record, with no steps, runs or run ids, and says reindex has work', async () => {
    const [derived] = await deriving.db.query<{ spans: number; logs: number; steps: number; runs: number }>(COUNTS);
    const [only] = await spansOnly.db.query<{ spans: number; logs: number; steps: number; runs: number }>(COUNTS);
    expect(derived.steps).toBeGreaterThan(0);
    expect(only).toEqual({ spans: derived.spans, logs: derived.logs, steps: 0, runs: 0 });
    expect(
      await spansOnly.db.query(
        'SELECT count(*)::int AS n FROM tapedeck_store.spans WHERE run_id IS NOT NULL OR own_run IS NOT NULL',
      ),
    ).toEqual([{ n: 0 }]);
    expect(await reindexReasons(spansOnly.db)).toEqual([UNDERIVED_REASON]);
    expect(await reindexReasons(deriving.db)).toEqual([]);
    expect((await runsOf(spansOnly)).runs).toEqual([]);
  });

  it('a redelivered request stores nothing twice', async () => {
    const capture = await loadCapture(listCaptures()[0]);
    const before = await spansOnly.db.query(COUNTS);
    expect(await ingestSpans(capture.spans, { tenant: '' }, spansOnly.running.store.ingest)).toEqual({ stored: 0 });
    expect(await spansOnly.db.query(COUNTS)).toEqual(before);
  });

  it('tapedeck reindex then derives what ingest would have, and clears the reason', async () => {
    await reindex(spansOnly.db, spansOnly.running.store.derive);
    expect(await spansOnly.db.query(STEPS)).toEqual(await deriving.db.query(STEPS));
    expect(await spansOnly.db.query(SPANS)).toEqual(await deriving.db.query(SPANS));
    expect(await reindexReasons(spansOnly.db)).toEqual([]);
    const [derivedRuns, reindexedRuns] = await Promise.all([deriving, spansOnly].map(runsOf));
    expect(derivedRuns.runs.length).toBeGreaterThan(0);
    expect(reindexedRuns.runs.map((r) => r.run).sort()).toEqual(derivedRuns.runs.map((r) => r.run).sort());
  });
});
