/**
 * @module tapes/trace-store
 * Reads and writes shared by ingest and reindex, all scoped to a set of traces.
 */
import type { Queryable } from '../store/database.js';
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import type { DerivedSpan } from '../ingest/ingest.js';
import { insertRows } from './bulk-insert.js';
import { hexToBytes, logSelectList, rowToLogRecord, rowToSpanRecord, spanSelectList } from './span-rows.js';
import { stepColumns, stepToRow, stepUpsertTail } from './step-rows.js';

export const spanKey = (traceId: string, spanId: string) => `${traceId}/${spanId}`;
export const distinct = <T>(values: readonly T[]): T[] => [...new Set(values)];

export async function upsertSteps(tx: Queryable, tenant: string, derived: readonly DerivedSpan[]): Promise<void> {
  const steps = derived.flatMap((d) => (d.step ? [d.step] : []));
  await insertRows(tx, 'tapedeck_store.steps', stepColumns, steps.map((s) => stepToRow(tenant, s)), stepUpsertTail);
}

/** Advisory locks keyed by the trace id's first 8 bytes, taken in one order to avoid deadlock. */
export async function lockTraces(tx: Queryable, traceIds: readonly string[]): Promise<void> {
  if (traceIds.length === 0) return;
  const keys = distinct(traceIds.map((t) => Buffer.from(t.slice(0, 16), 'hex').readBigInt64BE(0).toString())).sort();
  await tx.query('SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS k', [keys]);
}

export async function readLogsFor(tx: Queryable, tenant: string, spans: readonly SpanRecord[]): Promise<Map<string, LogRecord[]>> {
  const wanted = new Set(spans.map((s) => spanKey(s.traceId, s.spanId)));
  const rows = await tx.query(
    `SELECT ${logSelectList} FROM tapedeck_store.logs
      WHERE tenant = $1 AND trace_id = ANY($2::bytea[]) AND span_id = ANY($3::bytea[])
      ORDER BY time_ns, received_at, position, record_key`,
    [tenant, distinct(spans.map((s) => s.traceId)).map(hexToBytes), distinct(spans.map((s) => s.spanId)).map(hexToBytes)],
  );
  const bySpan = new Map<string, LogRecord[]>();
  for (const row of rows) {
    const log = rowToLogRecord(row);
    const key = spanKey(log.traceId!, log.spanId!);
    if (!wanted.has(key)) continue;
    const list = bySpan.get(key);
    if (list) list.push(log);
    else bySpan.set(key, [log]);
  }
  return bySpan;
}

export async function readSpans(tx: Queryable, tenant: string, ids: readonly [string, string][]): Promise<SpanRecord[]> {
  const wanted = new Set(ids.map(([t, s]) => spanKey(t, s)));
  const rows = await tx.query(
    `SELECT ${spanSelectList} FROM tapedeck_store.spans
      WHERE tenant = $1 AND trace_id = ANY($2::bytea[]) AND span_id = ANY($3::bytea[])`,
    [tenant, distinct(ids.map(([t]) => t)).map(hexToBytes), distinct(ids.map(([, s]) => s)).map(hexToBytes)],
  );
  return rows.map(rowToSpanRecord).filter((s) => wanted.has(spanKey(s.traceId, s.spanId)));
}
