/**
 * TapedeckSpanExporter, the in-process front door, as an SDK's span processor uses it: every
 * export is answered exactly once through its ExportResult and a failure never throws into
 * the app; forceFlush waits for exports in flight; shutdown is idempotent, closes only a store
 * it opened itself, and later exports fail. That its rows equal the OTLP receivers' rows is
 * test/conformance/ingest-exporters'.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TapedeckSpanExporter } from '../../src/exporter/tapedeck-span-exporter.js';
import type { Database } from '../../src/store/database.js';
import { createServerDatabase, databaseKinds } from '../helpers/databases.js';
import { readSpanRows, START_TIMEOUT_MS, startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';
import { createPgDatabase } from '../../src/store/pg-database.js';

function finishedSpans(n: number): ReadableSpan[] {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] });
  const tracer = provider.getTracer('exporter-test');
  for (let i = 0; i < n; i++) tracer.startSpan(`span-${i}`, { kind: SpanKind.INTERNAL }, ROOT_CONTEXT).end();
  return memory.getFinishedSpans();
}

/** Calls export and counts the callbacks: the result, and whether it came more than once. */
async function exportCounted(
  exporter: TapedeckSpanExporter,
  spans: ReadableSpan[],
): Promise<{ result: ExportResult; calls: () => number }> {
  let calls = 0;
  const result = await new Promise<ExportResult>((resolve) => {
    expect(() =>
      exporter.export(spans, (r) => {
        calls++;
        resolve(r);
      }),
    ).not.toThrow();
  });
  await new Promise((r) => setTimeout(r, 20));
  return { result, calls: () => calls };
}

const traceIdsOf = (spans: ReadableSpan[]) => [...new Set(spans.map((s) => s.spanContext().traceId))];

describe.each(databaseKinds)('TapedeckSpanExporter (%s)', (kind) => {
  let t: TestTapedeck;
  let commitDelayMs = 0;
  beforeAll(async () => {
    t = await startTestTapedeck(
      kind,
      {},
      {
        wrapDb: (db): Database => ({
          ...db,
          transaction: (fn) =>
            db.transaction(async (tx) => {
              const value = await fn(tx);
              if (commitDelayMs > 0) await new Promise((r) => setTimeout(r, commitDelayMs));
              return value;
            }),
        }),
      },
    );
  }, START_TIMEOUT_MS);
  afterAll(async () => t?.close());

  it('answers an export exactly once with SUCCESS, after its spans are stored', async () => {
    const spans = finishedSpans(3);
    const exporter = new TapedeckSpanExporter({ store: t.running.store });
    const { result, calls } = await exportCounted(exporter, spans);
    expect(result).toEqual({ code: ExportResultCode.SUCCESS });
    expect(calls()).toBe(1);
    expect(await readSpanRows(t.db, traceIdsOf(spans))).toHaveLength(3);
    await exporter.shutdown();
  });

  it('makes forceFlush wait for the exports in flight', async () => {
    const spans = finishedSpans(2);
    const exporter = new TapedeckSpanExporter({ store: t.running.store });
    let done = false;
    commitDelayMs = 300;
    try {
      exporter.export(spans, () => (done = true));
      await exporter.forceFlush();
      expect(done).toBe(true);
      expect(await readSpanRows(t.db, traceIdsOf(spans))).toHaveLength(2);
    } finally {
      commitDelayMs = 0;
    }
    await exporter.shutdown();
  });

  it('shuts down idempotently without closing a store it was given, and fails exports after shutdown', async () => {
    const exporter = new TapedeckSpanExporter({ store: t.running.store });
    await Promise.all([exporter.shutdown(), exporter.shutdown()]);
    await exporter.shutdown();
    const { result, calls } = await exportCounted(exporter, finishedSpans(1));
    expect(result.code).toBe(ExportResultCode.FAILED);
    expect(result.error?.message).toBe('TapedeckSpanExporter is shut down');
    expect(calls()).toBe(1);
    // the shared store still works
    const again = new TapedeckSpanExporter({ store: t.running.store });
    expect((await exportCounted(again, finishedSpans(1))).result.code).toBe(ExportResultCode.SUCCESS);
    await again.shutdown();
  });

  // On the server only: the config path is the same for both kinds, and an on-disk PGlite
  // (initdb, then a second open to look) costs several seconds more (in-memory PGlite has no
  // config setting). The built CLI test (ingest-sigterm) covers an on-disk PGlite.
  it.runIf(kind === 'postgres')(
    'opens its own store from the config option, writes to it, and closes it on shutdown',
    async () => {
      // arrange: a database that only the exporter opens
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-exporter-'));
      const server = await createServerDatabase();
      const spans = finishedSpans(2);
      try {
        const exporter = new TapedeckSpanExporter({ config: { databaseUrl: server.url, dataDir } });
        // act
        const { result } = await exportCounted(exporter, spans);
        await exporter.shutdown();
        // assert
        expect(result).toEqual({ code: ExportResultCode.SUCCESS });
        const db = createPgDatabase(server.url);
        try {
          expect(await readSpanRows(db, traceIdsOf(spans))).toHaveLength(2);
          const [others] = await db.query<{ n: bigint }>(
            'SELECT count(*) AS n FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
          );
          expect(others.n).toBe(0n); // the exporter closed what it opened
        } finally {
          await db.close();
        }
      } finally {
        await server.drop();
        rmSync(dataDir, { recursive: true, force: true });
      }
    },
  );
});

describe('TapedeckSpanExporter with an unreachable database', () => {
  it('retries within timeoutMillis, then reports the failure through its ExportResult, once, without throwing into the app, and tries again on the next export', async () => {
    const exporter = new TapedeckSpanExporter({
      config: { databaseUrl: 'postgres://postgres@127.0.0.1:1/nowhere' },
      timeoutMillis: 1_500,
    });
    for (let attempt = 0; attempt < 2; attempt++) {
      const started = Date.now();
      const { result, calls } = await exportCounted(exporter, finishedSpans(1));
      // retried, not failed at the first refusal; and answered within its timeout
      expect(Date.now() - started).toBeGreaterThanOrEqual(700);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(result.code).toBe(ExportResultCode.FAILED);
      expect(result.error).toBeInstanceOf(Error);
      expect(result.error?.message).toMatch(/127\.0\.0\.1:1.*unavailable|ECONNREFUSED/);
      expect(calls()).toBe(1);
    }
    await exporter.shutdown();
  });
});
