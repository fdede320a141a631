/**
 * @module tapes/trace-store
 * Reads and writes shared by ingest and reindex, all scoped to a set of traces.
 */
import type { Queryable } from '../store/database.js';
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import type { DerivedSpan } from './derived-span.js';
import { enqueueSteps } from '../recall/backlog.js';
import { insertRows } from '../store/bulk-insert.js';
import { hexToBytes, logSelectList, rowToLogRecord, rowToSpanRecord, spanSelectList } from './span-rows.js';
import { stepColumns, stepToRow, stepUpsertTail } from './step-rows.js';
import type { RunNode, RunOf } from './run-resolution.js';

export const spanKey = (traceId: string, spanId: string) => `${traceId}/${spanId}`;
export const distinct = <T>(values: readonly T[]): T[] => [...new Set(values)];

/** Writes (or rewrites) the steps, and records them in recall's backlog (recall/backlog.ts). */
export async function upsertSteps(tx: Queryable, tenant: string, derived: readonly DerivedSpan[]): Promise<void> {
  const steps = derived.flatMap((d) => (d.step ? [d.step] : []));
  await insertRows(
    tx,
    'tapedeck_store.steps',
    stepColumns,
    steps.map((s) => stepToRow(tenant, s)),
    stepUpsertTail,
  );
  await enqueueSteps(tx, tenant, steps);
}

/** Advisory locks keyed by the trace id's first 8 bytes, taken in one order to avoid deadlock. */
export async function lockTraces(tx: Queryable, traceIds: readonly string[]): Promise<void> {
  if (traceIds.length === 0) return;
  const keys = distinct(traceIds.map((t) => Buffer.from(t.slice(0, 16), 'hex').readBigInt64BE(0).toString())).sort();
  await tx.query('SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS k', [keys]);
}

export async function readLogsFor(
  tx: Queryable,
  tenant: string,
  spans: readonly SpanRecord[],
): Promise<Map<string, LogRecord[]>> {
  const wanted = new Set(spans.map((s) => spanKey(s.traceId, s.spanId)));
  const rows = await tx.query(
    `SELECT ${logSelectList} FROM tapedeck_store.logs
      WHERE tenant = $1 AND trace_id = ANY($2::bytea[]) AND span_id = ANY($3::bytea[])
      ORDER BY time_ns, received_at, position, record_key`,
    [
      tenant,
      distinct(spans.map((s) => s.traceId)).map(hexToBytes),
      distinct(spans.map((s) => s.spanId)).map(hexToBytes),
    ],
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

export async function readSpans(
  tx: Queryable,
  tenant: string,
  ids: readonly [string, string][],
): Promise<SpanRecord[]> {
  const wanted = new Set(ids.map(([t, s]) => spanKey(t, s)));
  const rows = await tx.query(
    `SELECT ${spanSelectList} FROM tapedeck_store.spans
      WHERE tenant = $1 AND trace_id = ANY($2::bytea[]) AND span_id = ANY($3::bytea[])`,
    [tenant, distinct(ids.map(([t]) => t)).map(hexToBytes), distinct(ids.map(([, s]) => s)).map(hexToBytes)],
  );
  return rows.map(rowToSpanRecord).filter((s) => wanted.has(spanKey(s.traceId, s.spanId)));
}

/** The run facts of every stored span of the traces (small columns only), keyed by spanKey. */
export async function readRunNodes(
  tx: Queryable,
  tenant: string,
  traceIds: readonly string[],
): Promise<Map<string, RunNode>> {
  const rows = await tx.query<{
    trace_id: string;
    span_id: string;
    parent_span_id: string | null;
    own_run: string | null;
    own_parent_run: string | null;
    run_id: string | null;
    parent_run: string | null;
  }>(
    `SELECT encode(trace_id, 'hex') AS trace_id, encode(span_id, 'hex') AS span_id, encode(parent_span_id, 'hex') AS parent_span_id,
            own_run, own_parent_run, run_id, parent_run
       FROM tapedeck_store.spans WHERE tenant = $1 AND trace_id = ANY($2::bytea[])`,
    [tenant, traceIds.map(hexToBytes)],
  );
  const nodes = new Map<string, RunNode>();
  for (const r of rows) {
    nodes.set(spanKey(r.trace_id, r.span_id), {
      traceId: r.trace_id,
      spanId: r.span_id,
      parentSpanId: r.parent_span_id,
      ownRun: r.own_run,
      ownParentRun: r.own_parent_run,
      runId: r.run_id,
      parentRun: r.parent_run,
    });
  }
  return nodes;
}

/** Sets run_id and parent_run of stored spans (those whose run changed). */
export async function updateRuns(
  tx: Queryable,
  tenant: string,
  changes: readonly (RunOf & { traceId: string; spanId: string })[],
): Promise<void> {
  if (changes.length === 0) return;
  await tx.query(
    `UPDATE tapedeck_store.spans s SET run_id = u.run_id, parent_run = u.parent_run
       FROM unnest($2::bytea[], $3::bytea[], $4::text[], $5::text[]) AS u(trace_id, span_id, run_id, parent_run)
      WHERE s.tenant = $1 AND s.trace_id = u.trace_id AND s.span_id = u.span_id`,
    [
      tenant,
      changes.map((c) => hexToBytes(c.traceId)),
      changes.map((c) => hexToBytes(c.spanId)),
      changes.map((c) => c.runId),
      changes.map((c) => c.parentRun),
    ],
  );
}
