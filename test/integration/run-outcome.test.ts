/**
 * A run's outcome is SQL for the stored runs (tapedeck_store.run_outcome, behind the
 * tapedeck.runs view) and TypeScript where a reader judges it by its own clock (recall:
 * readRunEnds + runOutcome). These tests hold the two equal: for the same runs, the same
 * outcome, at both sides of the 15-minute window.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readRunEnds } from '../../src/recall/query.js';
import { ACTIVE_WINDOW_NS, runOutcome } from '../../src/tapes/run-outcome.js';
import { databaseKinds } from '../helpers/databases.js';
import { openTestStore, type TestStore } from '../unit/runs/store-fixtures.js';
import { insertSyntheticRuns } from '../../bench/lib/synthetic-runs.mjs';

const MINUTE = 60_000_000_000n;
const nowNs = () => BigInt(Date.now()) * 1_000_000n;

describe.each(databaseKinds)('run outcome on %s', (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(kind);
    // Runs 0-23: successes, failures (run 7, 19) and runs that ended just now (8, 20).
    await insertSyntheticRuns(t.store.db, '', 0, 23, nowNs());
    // Run 8's shape ends at the given time: just inside the window, and just past it.
    await insertSyntheticRuns(t.store.db, 'inside', 8, 8, nowNs() - ACTIVE_WINDOW_NS + MINUTE);
    await insertSyntheticRuns(t.store.db, 'past', 8, 8, nowNs() - ACTIVE_WINDOW_NS - MINUTE);
  }, 60_000);
  afterAll(async () => t?.drop());

  async function bothWays(tenant: string) {
    const view = await t.store.db.query<{ run: string; outcome: string }>(
      'SELECT run, outcome FROM tapedeck.runs WHERE tenant_key = $1 ORDER BY run',
      [tenant],
    );
    const ends = await readRunEnds(
      t.store.db,
      tenant,
      view.map((v) => v.run),
    );
    const now = nowNs();
    return {
      sql: view.map((v) => [v.run, v.outcome]),
      ts: view.map((v) => [v.run, runOutcome(ends.get(v.run) ?? null, false, now)]),
    };
  }

  it('gives every stored run the outcome the tapedeck.runs view gives it', async () => {
    const { sql, ts } = await bothWays('');
    expect(ts).toEqual(sql);
    expect(new Set(sql.map(([, outcome]) => outcome))).toEqual(new Set(['success', 'failure', 'unknown']));
  });

  it('draws the still-running window where the SQL rule draws it', async () => {
    const inside = await bothWays('inside');
    expect(inside.sql).toEqual([['synth-0000008', 'unknown']]);
    expect(inside.ts).toEqual(inside.sql);
    const past = await bothWays('past');
    expect(past.sql).toEqual([['synth-0000008', 'success']]);
    expect(past.ts).toEqual(past.sql);
  });
});
