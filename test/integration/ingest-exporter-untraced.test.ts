/**
 * The in-process exporter's own database writes are not traced: every query it makes runs
 * in a context where tracing is suppressed, which is what an instrumented `pg` (or any
 * instrumentation) checks before starting a span. Without that, an app exporting through
 * TapedeckSpanExporter with pg instrumented would trace the exporter's writes and feed
 * them back to itself forever.
 */
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, isTracingSuppressed } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { TapedeckSpanExporter } from '../../src/exporter/tapedeck-span-exporter.js';
import { silentLogger } from '../../src/logger.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import type { Database, Queryable } from '../../src/store/database.js';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { openStore, type Store } from '../../src/open-store.js';

const seen: boolean[] = [];
const record = () => seen.push(isTracingSuppressed(context.active()));

function watched(db: Database): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params) => (record(), q.query(sql, params)),
    exec: (sql) => (record(), q.exec(sql)),
  });
  return { ...db, ...wrap(db), transaction: (fn) => (record(), db.transaction((tx) => fn(wrap(tx)))) };
}

let store: Store;
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(async () => {
  context.setGlobalContextManager(contextManager.enable());
  store = await openStore({ ...defaultConfig }, silentLogger(), {
    db: watched(await createPgliteDatabase()),
    payloads: createMemoryPayloadStore(),
  });
  seen.length = 0;
}, 120_000);

afterAll(async () => {
  await store?.close();
  context.disable();
});

it('runs every database call of an export with tracing suppressed', async () => {
  const spans = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  provider.getTracer('app').startSpan('work').end();
  const exporter = new TapedeckSpanExporter({ store });
  const result = await new Promise<{ code: ExportResultCode }>((resolve) =>
    exporter.export(spans.getFinishedSpans(), resolve),
  );
  expect(result.code).toBe(ExportResultCode.SUCCESS);
  expect(seen.length).toBeGreaterThan(0);
  expect(seen.every(Boolean)).toBe(true);
  // And outside an export, the same context manager does not suppress (the check can fail).
  seen.length = 0;
  await store.db.query('SELECT 1');
  expect(seen).toEqual([false]);
  await exporter.shutdown();
});
