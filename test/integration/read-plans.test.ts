/**
 * Every statement the read API runs for one run (its tape, tree, reconstruction, forks and
 * cassette, a diff of two runs) reads the store's tables by a key, while the statistics say
 * the tenant holds a few rows on a table that has grown (as between two ANALYZEs): planned
 * otherwise, a read of one run would scan the whole tenant. Each statement seen is planned
 * again under those statistics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { insertSpans, recordingStatements, STORE_TABLES, scansNotByKey } from '../helpers/query-plans.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

/** what a read of one run may read the tables by */
const BY_KEY = /trace_id|span_id|run_id|parent_run|digest|\bid\b|ctid|record_key/;

describe.each(databaseKinds)('the plans of reads on %s', (kind) => {
  let t: TestTapedeck;
  const seen = new Map<string, readonly unknown[]>();
  let runs: string[] = [];
  beforeAll(async () => {
    t = await startTestTapedeck(kind, {}, { wrapDb: (db) => recordingStatements(db, seen) });
    const db = t.running.store.db;
    await insertSpans(db, '', 400, 8);
    await db.query(
      `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, status, fingerprint, layout,
                                         normalizer_version, request)
       SELECT tenant, trace_id, span_id, 'model', name, 'ok', 'f', 'test', 1, to_json(repeat('r', 1500))::text
         FROM tapedeck_store.spans`,
    );
    await db.query(
      `INSERT INTO tapedeck_store.messages (tenant, digest, body, words)
       SELECT '', sha256(('message ' || i)::bytea), repeat('m', 1500), ARRAY[i::bigint] FROM generate_series(1, 3200) AS i`,
    );
    for (const ref of listCaptures().slice(0, 6)) {
      const capture = await loadCapture(ref);
      await ingestSpans(capture.spans, { tenant: '' }, t.running.store.ingest);
    }
    for (const table of STORE_TABLES) await db.query(`ANALYZE ${table}`);
    const rows = await db.query<{ run_id: string }>(
      `SELECT DISTINCT run_id FROM tapedeck_store.spans WHERE tenant = '' AND run_id NOT LIKE 'run %' ORDER BY 1`,
    );
    runs = rows.map((r) => r.run_id);
  }, 120_000);
  afterAll(async () => {
    await t?.close();
  });

  it('read one run by its keys, whatever the statistics say', async () => {
    expect(runs.length).toBeGreaterThanOrEqual(2);
    const [a, b] = runs;
    seen.clear();
    const paths = [
      `/v1/tapes/${encodeURIComponent(a)}`,
      `/v1/runs/${encodeURIComponent(a)}/tree`,
      `/v1/runs/${encodeURIComponent(a)}/reconstruct`,
      `/v1/runs/${encodeURIComponent(a)}/forks`,
      `/v1/runs/${encodeURIComponent(a)}/cassette?tree=true`,
      `/v1/diff?a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`,
    ];
    for (const path of paths) {
      const res = await fetch(`${t.url}${path}`);
      await res.arrayBuffer();
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    // each path ran statements of its own, all recorded
    expect(seen.size).toBeGreaterThanOrEqual(paths.length);
    const offending = await scansNotByKey(t.running.store.db, seen, BY_KEY);
    expect(offending).toEqual([]);
  }, 120_000);
});
