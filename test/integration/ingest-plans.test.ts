/**
 * Every statement an ingest transaction runs reads the store's tables by a key (a trace, a
 * span, a run, a message's digest, where a probe found a row), never by the tenant alone nor
 * by a scan, while the statistics say the tenant holds a few rows on a table that has grown
 * (as between two ANALYZEs of a new store): planned so, a statement would read the whole
 * tenant on every request. The ingests send the real captures and a multi-agent run (child
 * runs), each 64 times over in a request as an SDK batches them: parents after their children,
 * log records before and after their spans, deriving and not. Each statement seen is planned
 * again under those statistics.
 */
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeriveSpans } from '../../src/derive/derive.js';
import { createChunkedDerive } from '../../src/derive/derive-thread.js';
import { ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { loadCoordinatorFixture } from '../fixtures/multi-agent/coordinator-fixture.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import {
  insertSpans,
  recordingStatements,
  scansNotByKey,
  spanIdSql,
  STORE_TABLES,
  traceIdSql,
  withLaggingStatistics,
} from '../helpers/query-plans.js';
import { STORED_MESSAGE_IDS } from '../../src/tapes/message-rows.js';
import { SETTLE_PARENTS } from '../../src/tapes/run-parents.js';
import { LOCK_SPANS, STORED_LOGS, STORED_RUN_NODES, STORED_SPANS } from '../../src/tapes/trace-store.js';

describe.each(databaseKinds)('the plans of ingest on %s', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
    // the tenant's tables, of hundreds of pages each: too large to read per request
    await insertSpans(t.db, 'big', 400, 8);
    await t.db.query(
      `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, status, fingerprint, layout,
                                         normalizer_version, request)
       SELECT tenant, trace_id, span_id, 'model', name, 'ok', 'f', 'test', 1, repeat('r', 1500) FROM tapedeck_store.spans`,
    );
    await t.db.query(
      `INSERT INTO tapedeck_store.messages (tenant, digest, body, words)
       SELECT 'big', sha256(('message ' || i)::bytea), repeat('m', 1500), ARRAY[i::bigint] FROM generate_series(1, 3200) AS i`,
    );
    await t.db.query(
      `INSERT INTO tapedeck_store.logs (tenant, record_key, trace_id, span_id, time_ns, observed_time_ns,
                                        attributes, resource, position)
       SELECT 'big', sha256(('log ' || a.t)::bytea), ${traceIdSql('a.t')}, ${spanIdSql('a.t', '1')},
              2000 + a.t, 0, jsonb_build_object('text', repeat('y', 1500)), '{}', 0
         FROM generate_series(1, 800) AS a(t)`,
    );
    for (const table of STORE_TABLES) await t.db.query(`ANALYZE ${table}`);
  });
  afterAll(async () => {
    await t?.drop();
  });
  it('read the store by a key, whatever the statistics say', async () => {
    const seen = new Map<string, readonly unknown[]>();
    const db = recordingStatements(t.db, seen);
    const derive = createDeriveSpans({ payloads: createMemoryPayloadStore() }, { payloadThresholdBytes: 4096 });
    // deriving as the server does (chunk by chunk, COPY where the adapter has it), and in one go
    const chunked = createChunkedDerive({ payloadThresholdBytes: 4096, worker: false });
    const big = { tenant: 'big' };
    // a request of 64 runs, as an SDK batches agents' spans: each capture's traces 64 times over
    const batch = <T extends { traceId?: string | null }>(records: readonly T[], name: string): T[] =>
      Array.from({ length: 64 }, (_, i) =>
        records.map((r) => ({ ...r, traceId: createHash('md5').update(`${name} ${i} ${r.traceId}`).digest('hex') })),
      ).flat();
    const ingestAll = async () => {
      const refs = listCaptures();
      for (const ref of refs) {
        const capture = await loadCapture(ref);
        const name = `${ref.layout}/${ref.scenario}`;
        const spans = batch(capture.spans, name);
        const logs = batch(capture.logs, name);
        const children = spans.filter((s) => s.parentSpanId);
        await ingestLogs(logs.slice(0, logs.length >> 1), big, { db, derive, chunked });
        await ingestSpans(children, big, { db, derive, chunked });
        await ingestSpans(
          spans.filter((s) => !s.parentSpanId),
          big,
          { db, derive, chunked },
        );
        await ingestLogs(logs.slice(logs.length >> 1), big, { db, derive, chunked });
        if (ref !== refs[0]) continue;
        await ingestSpans(spans, { tenant: 'in one go' }, { db, derive });
        await ingestSpans(spans, { tenant: 'spans only' }, { db, derive: null });
      }
      // a coordinator and its sub-agents (child runs), the parents sent last
      const coordinator = batch(loadCoordinatorFixture(), 'coordinator');
      await ingestSpans(
        coordinator.filter((s) => s.parentSpanId),
        big,
        { db, derive, chunked },
      );
      await ingestSpans(
        coordinator.filter((s) => !s.parentSpanId),
        big,
        { db, derive, chunked },
      );
    };
    await withLaggingStatistics(t.db, STORE_TABLES, ingestAll).finally(() => chunked.close());
    // the paths that read what is stored were all taken
    for (const sql of [STORED_RUN_NODES, STORED_SPANS, STORED_LOGS, LOCK_SPANS, SETTLE_PARENTS, STORED_MESSAGE_IDS])
      expect(seen.has(sql)).toBe(true);

    const offending = await scansNotByKey(t.db, seen, /trace_id|span_id|run_id|digest|ctid|record_key/);
    expect(offending).toEqual([]);
  }, 120_000);
});
