/**
 * On a PostgreSQL server ingest writes new spans and their steps with binary COPY
 * (src/ingest/write-spans.ts, src/store/pg-copy.ts); on PGlite it writes them with multi-row
 * INSERT. Both must store the very same rows. Scope: that equivalence over every corpus
 * capture (including a redelivery and a parent arriving after its children), the lexemes of a
 * binary tsvector, the fallback when a row COPY meant to add is already there, and a failure
 * while a COPY is streaming. Skipped without TAPEDECK_TEST_DATABASE_URL: PGlite has no COPY.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDeriveSpans } from '../../src/derive/derive.js';
import { type IngestDeps, ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import type { DeriveSpans } from '../../src/tapes/derived-span.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { wordIds } from '../../src/recall/word-hash.js';
import type { SpanRecord } from '../../src/spans/span-record.js';
import type { Database } from '../../src/store/database.js';
import { createPgDatabase } from '../../src/store/pg-database.js';
import { stepColumns } from '../../src/tapes/step-rows.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { span } from '../helpers/span-builder.js';

const onServer = databaseKinds.includes('postgres');

function depsFor(db: Database, derive?: DeriveSpans): IngestDeps {
  return {
    db,
    derive: derive ?? createDeriveSpans({ payloads: createMemoryPayloadStore() }, { payloadThresholdBytes: 4096 }),
  };
}

/** Every stored column but received_at, as text, in key order. */
async function storedRows(
  db: Database,
  tenant: string,
): Promise<{ spans: unknown[]; steps: unknown[]; words: unknown[] }> {
  const spans = await db.query(
    `SELECT encode(trace_id, 'hex') t, encode(span_id, 'hex') s, encode(parent_span_id, 'hex') p, trace_state, flags::text, name, kind,
            start_ns::text, end_ns::text, status_code, status_message, attributes::text, events::text, links::text, resource::text,
            scope_name, scope_version, scope_attributes::text, service_name, dropped_attributes_count, dropped_events_count,
            dropped_links_count, resource_dropped_attributes_count, own_run, own_parent_run, run_id, parent_run
       FROM tapedeck_store.spans WHERE tenant = $1 ORDER BY trace_id, span_id`,
    [tenant],
  );
  const steps = await db.query(
    `SELECT encode(trace_id, 'hex') t, encode(span_id, 'hex') s, ${stepColumns
      .slice(3)
      .map((c) => `${c.name}::text`)
      .join(', ')}
       FROM tapedeck_store.steps WHERE tenant = $1 ORDER BY trace_id, span_id`,
    [tenant],
  );
  // the message store, with recall's words of each message (a step's own are among its columns)
  const words = await db.query(
    `SELECT encode(digest, 'hex') d, body, words::text AS words
       FROM tapedeck_store.messages WHERE tenant = $1 ORDER BY digest`,
    [tenant],
  );
  return { spans, steps, words };
}

describe.skipIf(!onServer)('COPY and INSERT store the same rows', () => {
  let server: TestDatabase;
  let embedded: TestDatabase;
  beforeAll(async () => {
    server = await createTestDatabase('postgres');
    embedded = await createTestDatabase('pglite');
  }, 60_000);
  afterAll(async () => {
    await server?.drop();
    await embedded?.drop();
  });

  it.each(listCaptures().map((c) => [`${c.layout}/${c.scenario}`, c] as const))(
    'for the capture %s, delivered in pieces and again',
    async (name, ref) => {
      const capture = await loadCapture(ref);
      const tenant = name;
      for (const t of [server, embedded]) {
        const deps = depsFor(t.db);
        const meta = { tenant };
        // children before parents (the trace's last span last), the logs in between, then all again
        const half = Math.ceil(capture.spans.length / 2);
        await ingestSpans(capture.spans.slice(half), meta, deps);
        if (capture.logs.length > 0) await ingestLogs(capture.logs, meta, deps);
        await ingestSpans(capture.spans.slice(0, half), meta, deps);
        const again = await ingestSpans(capture.spans, meta, deps);
        expect(again.stored).toBe(0);
      }
      const copied = await storedRows(server.db, tenant);
      expect(copied.spans.length).toBe(new Set(capture.spans.map((s) => `${s.traceId}/${s.spanId}`)).size);
      expect(copied).toEqual(await storedRows(embedded.db, tenant));
    },
    60_000,
  );

  it('reads a binary bigint[] as the server reads the same numbers in decimal', async () => {
    const halves = Int32Array.from([0, 0, -1, -1, 0x7fffffff, -1, -2147483648, 0, 123, -456]);
    const rows = await server.db.transaction(async (tx) => {
      await tx.query('CREATE TEMP TABLE hashes (n integer, words bigint[]) ON COMMIT DROP');
      await tx.copyRows!(
        'hashes',
        [
          { name: 'n', type: 'int4' },
          { name: 'words', type: 'int8[]' },
        ],
        [
          [1, halves],
          [2, new Int32Array(0)],
        ],
      );
      return tx.query<{ n: number; same: boolean }>(
        "SELECT n, words = CASE n WHEN 1 THEN $1::bigint[] ELSE '{}'::bigint[] END AS same FROM hashes ORDER BY n",
        [wordIds(halves)],
      );
    });
    expect(rows).toEqual([
      { n: 1, same: true },
      { n: 2, same: true },
    ]);
    expect(wordIds(halves)).toEqual(['0', '-1', '9223372036854775807', '-9223372036854775808', '532575944248']);
  });

  it('reads a binary text[] as the server reads the same strings, NULLs included', async () => {
    const lists = [['stop'], [null, 'tool_calls', ''], ['a "quoted" \\ reason, with 北京', null]];
    const rows = await server.db.transaction(async (tx) => {
      await tx.query('CREATE TEMP TABLE reasons (n integer, reasons text[]) ON COMMIT DROP');
      await tx.copyRows!(
        'reasons',
        [
          { name: 'n', type: 'int4' },
          { name: 'reasons', type: 'text[]' },
        ],
        lists.map((l, i) => [i, l]),
      );
      return tx.query<{ reasons: (string | null)[] }>('SELECT reasons FROM reasons ORDER BY n');
    });
    expect(rows.map((r) => r.reasons)).toEqual(lists);
  });

  it('falls back to INSERT when a row it meant to COPY was stored meanwhile, and stores the batch in full', async () => {
    const tenant = 'fallback';
    const llm = span({
      name: 'chat gpt-4o-mini',
      id: 'llm',
      traceId: 'fa11bac0'.repeat(4),
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.input.messages': '[{"role":"user","content":"hi"}]',
      },
    });
    const other = span({
      name: 'execute_tool lookup',
      id: 'tool',
      traceId: llm.traceId,
      attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' },
    });
    // a step row for a span that is not stored: nothing in tapedeck writes one, so COPY meets it
    await server.db.query(
      `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, status, fingerprint, layout, normalizer_version)
       VALUES ($1, decode($2, 'hex'), decode($3, 'hex'), 'llm', 'stale', 'ok', 'stale', 'otel-genai', 0)`,
      [tenant, llm.traceId, llm.spanId],
    );
    const result = await ingestSpans([llm, other], { tenant }, depsFor(server.db));
    expect(result.stored).toBe(2);
    await ingestSpans([llm, other], { tenant }, depsFor(embedded.db));
    const rows = await storedRows(server.db, tenant);
    expect(rows.steps.map((s) => (s as { name: string }).name)).not.toContain('stale');
    expect(rows).toEqual(await storedRows(embedded.db, tenant));
  });

  it('stores nothing when deriving fails while a COPY streams, and the connection serves the next request', async () => {
    const single = await createTestDatabase('postgres');
    const db = createPgDatabase(single.url!, { maxConnections: 1 });
    try {
      const spans: SpanRecord[] = Array.from({ length: 20 }, (_, i) =>
        span({
          name: 'execute_tool lookup',
          id: `tool${i}`,
          traceId: 'c0ffee00'.repeat(4),
          attributes: { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'lookup' },
        }),
      );
      const real = depsFor(db).derive!;
      let calls = 0;
      const failing: DeriveSpans = async (batch, logsOf) => {
        calls += batch.length;
        if (calls > 5) throw new Error('payload store unreachable');
        return real(batch, logsOf);
      };
      await expect(ingestSpans(spans, { tenant: '' }, depsFor(db, failing))).rejects.toThrow(
        'payload store unreachable',
      );
      expect(
        await db.query(
          'SELECT (SELECT count(*) FROM tapedeck_store.spans)::int AS spans, (SELECT count(*) FROM tapedeck_store.steps)::int AS steps',
        ),
      ).toEqual([{ spans: 0, steps: 0 }]);
      expect(await ingestSpans(spans, { tenant: '' }, depsFor(db))).toEqual({ stored: 20 });
    } finally {
      await db.close();
      await single.drop();
    }
  }, 60_000);
});
