/**
 * @module ingest/ingest
 * The one core every front door calls (OTLP/HTTP, OTLP/gRPC, the in-process SpanExporter).
 *
 * Contract: resolves only after everything it was given is committed; rejects with
 * IngestError('unavailable') when the database cannot take it, in which case nothing of the
 * request is stored (one transaction) and the sender should retry. Redelivery is harmless:
 * a span or log record already stored is not stored again.
 *
 * Writes to one trace take turns (a transaction-scoped advisory lock per trace), so a span
 * and the log records carrying its content, arriving in two concurrent requests, always
 * meet: whichever commits second sees the other and derives the complete step.
 */
import { IngestError } from '../errors.js';
import { type Database, type Queryable, DatabaseUnavailableError } from '../store/database.js';
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import { insertRows } from '../tapes/bulk-insert.js';
import { logRecordKeys } from '../tapes/log-key.js';
import { resolveRuns } from '../tapes/resolve-runs.js';
import { hexToBytes, logColumns, logSelectList, logToRow, rowToLogRecord, rowToSpanRecord, spanColumns, spanSelectList, spanToRow } from '../tapes/span-rows.js';
import { stepColumns, stepToRow, stepUpsertTail, type StoredStep } from '../tapes/step-rows.js';

/** What deriving a span produced: its run facts and, when it is a step, the stored step. */
export interface DerivedSpan {
  ownRun: string | null;
  ownParentRun: string | null;
  step: StoredStep | null;
}

/** Normalizes, offloads and digests spans; `logsOf` gives the log records correlated to a span. */
export type DeriveSpans = (spans: readonly SpanRecord[], logsOf: (span: SpanRecord) => LogRecord[]) => Promise<DerivedSpan[]>;

export interface IngestDeps {
  db: Database;
  derive: DeriveSpans;
}

export interface IngestMeta {
  /** '' when the request carries no tenant */
  tenant: string;
}

export async function ingestSpans(spans: readonly SpanRecord[], meta: IngestMeta, deps: IngestDeps): Promise<{ stored: number }> {
  if (spans.length === 0) return { stored: 0 };
  return withDatabase(() =>
    deps.db.transaction(async (tx) => {
      const traceIds = distinct(spans.map((s) => s.traceId));
      await lockTraces(tx, traceIds);
      const logs = await readLogsFor(tx, meta.tenant, spans);
      const derived = await deps.derive(spans, (s) => logs.get(spanKey(s.traceId, s.spanId)) ?? []);
      const inserted = await insertRows<{ span_id: Uint8Array }>(
        tx,
        'tapedeck_store.spans',
        spanColumns,
        spans.map((s, i) => spanToRow(meta.tenant, s, derived[i].ownRun, derived[i].ownParentRun)),
        'ON CONFLICT (tenant, trace_id, span_id) DO NOTHING RETURNING span_id',
      );
      await upsertSteps(tx, meta.tenant, derived);
      await resolveRuns(tx, meta.tenant, traceIds.map(hexToBytes));
      return { stored: inserted.length };
    }),
  );
}

export async function ingestLogs(logs: readonly LogRecord[], meta: IngestMeta, deps: IngestDeps): Promise<{ stored: number }> {
  if (logs.length === 0) return { stored: 0 };
  const keys = logRecordKeys(logs);
  return withDatabase(() =>
    deps.db.transaction(async (tx) => {
      const traceIds = distinct(logs.flatMap((l) => (l.traceId ? [l.traceId] : [])));
      await lockTraces(tx, traceIds);
      const inserted = await insertRows(
        tx,
        'tapedeck_store.logs',
        logColumns,
        logs.map((l, i) => logToRow(meta.tenant, keys[i], l)),
        'ON CONFLICT (tenant, record_key) DO NOTHING RETURNING 1',
      );
      // Content that arrives after its span completes that span's step.
      const correlated = logs.filter((l) => l.traceId && l.spanId);
      if (correlated.length > 0) {
        const spans = await readSpans(tx, meta.tenant, correlated.map((l) => [l.traceId!, l.spanId!]));
        if (spans.length > 0) {
          const allLogs = await readLogsFor(tx, meta.tenant, spans);
          const derived = await deps.derive(spans, (s) => allLogs.get(spanKey(s.traceId, s.spanId)) ?? []);
          await upsertSteps(tx, meta.tenant, derived);
        }
      }
      return { stored: inserted.length };
    }),
  );
}

async function upsertSteps(tx: Queryable, tenant: string, derived: readonly DerivedSpan[]): Promise<void> {
  const steps = derived.flatMap((d) => (d.step ? [d.step] : []));
  await insertRows(tx, 'tapedeck_store.steps', stepColumns, steps.map((s) => stepToRow(tenant, s)), stepUpsertTail);
}

/** Advisory locks keyed by the trace id's first 8 bytes, taken in one order to avoid deadlock. */
async function lockTraces(tx: Queryable, traceIds: readonly string[]): Promise<void> {
  if (traceIds.length === 0) return;
  const keys = distinct(traceIds.map((t) => Buffer.from(t.slice(0, 16), 'hex').readBigInt64BE(0).toString())).sort();
  await tx.query('SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS k', [keys]);
}

async function readLogsFor(tx: Queryable, tenant: string, spans: readonly SpanRecord[]): Promise<Map<string, LogRecord[]>> {
  const wanted = new Set(spans.map((s) => spanKey(s.traceId, s.spanId)));
  const rows = await tx.query(
    `SELECT ${logSelectList} FROM tapedeck_store.logs
      WHERE tenant = $1 AND trace_id = ANY($2::bytea[]) AND span_id = ANY($3::bytea[])
      ORDER BY time_ns, record_key`,
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

async function readSpans(tx: Queryable, tenant: string, ids: readonly [string, string][]): Promise<SpanRecord[]> {
  const wanted = new Set(ids.map(([t, s]) => spanKey(t, s)));
  const rows = await tx.query(
    `SELECT ${spanSelectList} FROM tapedeck_store.spans
      WHERE tenant = $1 AND trace_id = ANY($2::bytea[]) AND span_id = ANY($3::bytea[])`,
    [tenant, distinct(ids.map(([t]) => t)).map(hexToBytes), distinct(ids.map(([, s]) => s)).map(hexToBytes)],
  );
  return rows.map(rowToSpanRecord).filter((s) => wanted.has(spanKey(s.traceId, s.spanId)));
}

async function withDatabase<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) {
      throw new IngestError('unavailable', 'the database is unavailable; nothing from this request was stored, retry later', {
        cause: error,
        retryAfterSeconds: 5,
      });
    }
    throw error;
  }
}

const spanKey = (traceId: string, spanId: string) => `${traceId}/${spanId}`;
const distinct = <T>(values: readonly T[]): T[] => [...new Set(values)];
