/**
 * @module ingest/ingest
 * The one core every front door calls (OTLP/HTTP, OTLP/gRPC, the in-process SpanExporter).
 *
 * Contract: resolves only after everything it was given is committed; rejects with
 * IngestError('unavailable') when the database or the payload store cannot take it, in
 * which case nothing of the request is stored (one transaction) and the sender should retry.
 * Redelivery is harmless: a span or log record already stored is not stored again. Text
 * PostgreSQL cannot hold (NUL, lone surrogates) is replaced first (spans/storable-text.ts),
 * and a span that derivation cannot read is stored with no step: content never fails a batch.
 *
 * Writes to one trace take turns (a transaction-scoped advisory lock on its bucket of traces,
 * tapes/trace-store.ts lockTraces), so a span and the log records carrying its content,
 * arriving in two concurrent requests, always meet: whichever commits second sees the other
 * and derives the complete step.
 */
import { IngestError } from '../errors.js';
import { type Database, DatabaseUnavailableError, type Queryable } from '../store/database.js';
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import { storableLogs, storableSpans } from '../spans/storable-text.js';
import { insertRows } from '../store/bulk-insert.js';
import { logRecordKeys } from '../tapes/log-key.js';
import { logColumns, logToRow } from '../tapes/span-rows.js';
import type { DeriveSpans } from '../tapes/derived-span.js';
import { spanKey } from '../tapes/span-tree.js';
import { distinct, lockTraces, readLogsFor, readSpans, upsertSteps } from '../tapes/trace-store.js';
import type { ChunkedDerive } from '../derive/derive-thread.js';
import { writeSpans } from './write-spans.js';
import { arrivalTime } from './arrival.js';
import { PayloadStoreUnavailableError } from '../payloads/payload-store.js';
import type { Metrics } from '../metrics/metrics.js';

export interface IngestDeps {
  db: Database;
  /** null: spans and log records are kept with no steps or runs (--derive off) */
  derive: DeriveSpans | null;
  /** derive for COPY, chunk by chunk (derive-thread.ts: on a worker thread); absent or null: derive is used */
  chunked?: ChunkedDerive | null;
  /** counts what was accepted and deduplicated; absent: nothing is counted */
  metrics?: Metrics;
}

export interface IngestMeta {
  /** '' when the request carries no tenant */
  tenant: string;
  /** when the request arrived (arrivalTime()); absent, when its records are stored */
  receivedAt?: string;
}

export async function ingestSpans(
  received: readonly SpanRecord[],
  meta: IngestMeta,
  deps: IngestDeps,
): Promise<{ stored: number }> {
  // A span sent twice in one request is one span (the first copy wins, as on redelivery).
  const arrivedAt = performance.now();
  const spans = firstOfEach(storableSpans(received));
  if (spans.length === 0) return { stored: 0 };
  const deriving = deps.derive ? { derive: deps.derive, chunked: deps.chunked ?? null } : null;
  const result = await withDatabase(async () => {
    try {
      return { stored: await deps.db.transaction((tx) => writeSpans(tx, spans, meta.tenant, deriving)) };
    } catch (error) {
      // Two requests that each hold what the other waits for (a trace, a new message): PostgreSQL
      // ended this one. Once more, every trace locked first, in the one order (write-spans.ts).
      if (sqlStateOf(error) === DEADLOCK)
        return {
          stored: await deps.db.transaction((tx) => writeSpans(tx, spans, meta.tenant, deriving, true)),
        };
      // COPY writes the rows it found missing under the trace locks; a row that a writer not
      // taking them stored meanwhile (tapedeck has none) fails it: then once more, the
      // INSERT ... ON CONFLICT way.
      if (sqlStateOf(error) !== UNIQUE_VIOLATION) throw error;
      return { stored: await deps.db.transaction((tx) => writeSpans(withoutCopy(tx), spans, meta.tenant, deriving)) };
    }
  });
  if (deps.metrics) {
    deps.metrics.spansAccepted.inc(received.length);
    deps.metrics.spansDeduplicated.inc(received.length - result.stored);
    if (deriving) deps.metrics.deriveLagSeconds.set((performance.now() - arrivedAt) / 1000);
  }
  return result;
}

const UNIQUE_VIOLATION = '23505';
const DEADLOCK = '40P01';

/** The SQLSTATE of a statement's failure, also under DatabaseUnavailableError (a transient one). */
function sqlStateOf(error: unknown): unknown {
  const cause = error instanceof DatabaseUnavailableError ? error.cause : error;
  return (cause as { code?: unknown } | null)?.code;
}

function withoutCopy(tx: Queryable): Queryable {
  return { query: (sql, params, options) => tx.query(sql, params, options), exec: (sql) => tx.exec(sql) };
}

export async function ingestLogs(
  received: readonly LogRecord[],
  meta: IngestMeta,
  deps: IngestDeps,
): Promise<{ stored: number }> {
  if (received.length === 0) return { stored: 0 };
  const logs = storableLogs(received);
  const keys = logRecordKeys(logs);
  const receivedAt = meta.receivedAt ?? arrivalTime();
  const result = await withDatabase(() =>
    deps.db.transaction(async (tx) => {
      const traceIds = distinct(logs.flatMap((l) => (l.traceId ? [l.traceId] : [])));
      await lockTraces(tx, traceIds);
      const inserted = await insertRows(
        tx,
        'tapedeck_store.logs',
        logColumns,
        logs.map((l, i) => logToRow(meta.tenant, keys[i], l, i, receivedAt)),
        'ON CONFLICT (tenant, record_key, time_ns) DO NOTHING RETURNING 1',
      );
      // Content that arrives after its span completes that span's step.
      const correlated = logs.filter((l) => l.traceId && l.spanId);
      if (correlated.length > 0 && deps.derive) {
        const spans = await readSpans(
          tx,
          meta.tenant,
          correlated.map((l) => [l.traceId!, l.spanId!]),
        );
        if (spans.length > 0) {
          const allLogs = await readLogsFor(tx, meta.tenant, spans);
          const derived = await deps.derive(spans, (s) => allLogs.get(spanKey(s.traceId, s.spanId)) ?? []);
          await upsertSteps(tx, meta.tenant, derived);
        }
      }
      return { stored: inserted.length };
    }),
  );
  deps.metrics?.logsAccepted.inc(received.length);
  deps.metrics?.logsDeduplicated.inc(received.length - result.stored);
  return result;
}

async function withDatabase<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DatabaseUnavailableError) {
      throw new IngestError(
        'unavailable',
        'the database is unavailable; nothing from this request was stored, retry later',
        {
          cause: error,
          retryAfterSeconds: 5,
        },
      );
    }
    if (error instanceof PayloadStoreUnavailableError) {
      throw new IngestError(
        'unavailable',
        'the payload store cannot write (see the server log); nothing from this request was stored, retry later',
        { cause: error, retryAfterSeconds: 5 },
      );
    }
    throw error;
  }
}

function firstOfEach(spans: readonly SpanRecord[]): readonly SpanRecord[] {
  const seen = new Set<string>();
  const out: SpanRecord[] = [];
  for (const s of spans) {
    const key = spanKey(s.traceId, s.spanId);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(s);
  }
  return out.length === spans.length ? spans : out;
}
