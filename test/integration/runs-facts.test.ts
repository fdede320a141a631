/**
 * The runs module reads the tables directly for speed (run-pages.ts, run-tapes.ts); these
 * tests pin that it says exactly what the public readers say: every run's outcome, first
 * start and parent run as the tapedeck.runs view has them, and every tape as readTape
 * (tapes/tape-service.ts) serves it, resolved or not, capped or not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { countRuns, pageRuns, readRunFacts } from '../../src/runs/run-pages.js';
import { readTapes } from '../../src/tapes/tape-service.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { listCaptures } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { loadCoordinatorFixture } from '../fixtures/multi-agent/coordinator-fixture.js';
import { ingestRecords, loadCaptureRecords, openTestStore, type TestStore } from '../unit/runs/store-fixtures.js';
import { insertSyntheticRuns, startOf } from '../../bench/lib/synthetic-runs.mjs';

describe.each(databaseKinds)('run facts and tapes on %s', (kind) => {
  let t: TestStore;
  let runs: string[];
  beforeAll(async () => {
    t = await openTestStore(kind, { payloadThresholdBytes: 512 }); // offload often: resolve has work
    for (const ref of listCaptures()) await ingestRecords(t.store, await loadCaptureRecords(ref));
    await ingestSpans(loadCoordinatorFixture(), { tenant: '' }, t.store.ingest);
    await insertSyntheticRuns(t.store.db, '', 0, 47, BigInt(Date.now()) * 1_000_000n);
    runs = (await t.store.db.query<{ run: string }>('SELECT run FROM tapedeck.runs ORDER BY run')).map((r) => r.run);
  }, 180_000);
  afterAll(async () => t?.drop());

  it('agree with the tapedeck.runs view on outcome, first start and parent run', async () => {
    const view = await t.store.db.query<{
      run: string;
      outcome: string;
      first_start_ns: bigint;
      parent_run: string | null;
    }>('SELECT run, outcome, first_start_ns, parent_run FROM tapedeck.runs WHERE tenant IS NULL ORDER BY run');
    const facts = await readRunFacts(t.store.db, '', runs);
    expect(
      runs
        .map((r) => facts.get(r))
        .map(
          (f) => f && { run: f.run, outcome: f.outcome, first_start_ns: f.first_start_ns, parent_run: f.parent_run },
        ),
    ).toEqual(view.map((v) => ({ ...v, first_start_ns: BigInt(v.first_start_ns) })));
    expect(new Set(view.map((v) => v.outcome))).toEqual(new Set(['success', 'failure', 'unknown']));
  });

  it('page through every run once, in run id order, within a time window', async () => {
    const seen: string[] = [];
    for (let after: string | null = null; ; ) {
      const page = await pageRuns(t.store.db, '', { since: null, until: null }, after, 7);
      seen.push(...page.map((p) => p.run));
      if (page.length < 7) break;
      after = page[page.length - 1].run;
    }
    expect(seen).toEqual(runs);
    expect(await countRuns(t.store.db, '', { since: null, until: null })).toBe(runs.length);
    const window = await pageRuns(t.store.db, '', { since: startOf(10), until: startOf(20) }, null, 100);
    expect(window.map((f) => f.run)).toEqual(
      Array.from({ length: 10 }, (_, i) => `synth-${String(10 + i).padStart(7, '0')}`),
    );
  });

  it('read the same tapes as readTape, resolved or not, capped or not', async () => {
    for (const options of [{}, { resolve: true }, { resolve: true, maxResolveBytes: 300 }, { maxSpans: 2 }]) {
      const batch = await readTapes(t.store, '', runs, options);
      for (const run of runs)
        expect(batch.get(run), `${run} ${JSON.stringify(options)}`).toEqual(await readTape(t.store, '', run, options));
    }
    expect((await readTapes(t.store, '', ['no-such-run'])).size).toBe(0);
  });
});
