/**
 * @module ingest/write-spans
 * What ingestSpans does inside its one transaction, for spans already deduplicated:
 * 1. lock the batch's traces (advisory locks, so a span and its log records meet);
 * 2. read the run facts of the traces' stored spans and the log records of the batch's spans;
 * 3. derive each span (normalize, offload, digests) and write the steps and their traces'
 *    words for recall (recall/trace-words.ts; upsertSteps writes both);
 * 4. resolve runs in memory (tapes/run-resolution.ts) and write the new spans with their run,
 *    then update the stored spans whose run changed.
 *
 * Under the locks, the stored spans read in step 2 are exactly the rows an INSERT ... ON
 * CONFLICT would find, so where the adapter has copyRows (PostgreSQL server) new spans and
 * their steps are written with binary COPY, streamed as they are derived and encoded; a
 * redelivered span's step is upserted as before. Without copyRows (PGlite) every write is a
 * multi-row INSERT with the same ON CONFLICT clauses as always.
 *
 * With derive off (derive null) steps 2-4 shrink to reading which spans are stored: the new
 * ones are written with no run facts, and the database records that `tapedeck reindex` has
 * spans to derive (tapedeck_store.reindex_needed).
 */
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import type { Queryable } from '../store/database.js';
import { copyColumnsOf, insertRows } from '../tapes/bulk-insert.js';
import { TraceWords, writeTraceWords } from '../recall/trace-words.js';
import { resolveRunsInMemory, type RunNode } from '../tapes/run-resolution.js';
import { resolveRuns } from '../tapes/resolve-runs.js';
import { hexToBytes, spanToRow, spanWriteColumns } from '../tapes/span-rows.js';
import { stepColumns, stepToRow } from '../tapes/step-rows.js';
import { distinct, lockTraces, readLogsFor, readRunNodes, spanKey, updateRuns, upsertSteps } from '../tapes/trace-store.js';
import type { DeriveSpans, DerivedSpan } from './ingest.js';

const spanCopyColumns = copyColumnsOf(spanWriteColumns);
const stepCopyColumns = copyColumnsOf(stepColumns);

type RunFacts = Pick<DerivedSpan, 'ownRun' | 'ownParentRun'>;

/** Writes spans (distinct keys) and their steps; resolves with the number of new spans. */
export async function writeSpans(tx: Queryable, spans: readonly SpanRecord[], tenant: string, derive: DeriveSpans | null): Promise<number> {
  const traceIds = distinct(spans.map((s) => s.traceId));
  await lockTraces(tx, traceIds);
  const stored = await readRunNodes(tx, tenant, traceIds);
  const isNew = (s: SpanRecord) => !stored.has(spanKey(s.traceId, s.spanId));
  if (!derive) return writeUnderived(tx, spans.filter(isNew), tenant);
  const logs = await readLogsFor(tx, tenant, spans);
  const logsOf = (s: SpanRecord): LogRecord[] => logs.get(spanKey(s.traceId, s.spanId)) ?? [];

  const facts = tx.copyRows ? await copySteps(tx, spans, tenant, derive, logsOf, isNew) : await insertSteps(tx, spans, tenant, derive, logsOf);

  const fresh = spans.filter(isNew);
  const nodes: RunNode[] = [...stored.values()];
  for (const s of fresh) {
    const f = facts.get(spanKey(s.traceId, s.spanId))!;
    nodes.push({ traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId, ownRun: f.ownRun, ownParentRun: f.ownParentRun, runId: null, parentRun: null });
  }
  const runs = resolveRunsInMemory(nodes);
  const noRun = { runId: null, parentRun: null };
  function* spanRows(): Generator<unknown[]> {
    for (const s of fresh) {
      const key = spanKey(s.traceId, s.spanId);
      const f = facts.get(key)!;
      const run = runs === 'ambiguous' ? noRun : runs.get(key)!;
      yield [...spanToRow(tenant, s, f.ownRun, f.ownParentRun), run.runId, run.parentRun];
    }
  }
  const inserted = await insertSpanRows(tx, spanRows());

  if (runs === 'ambiguous') {
    // Two parent runs for one run: let SQL's max() (and the server's collation) choose, as always.
    await resolveRuns(tx, tenant, traceIds.map(hexToBytes));
  } else {
    const changed = [...stored.values()].flatMap((n) => {
      const run = runs.get(spanKey(n.traceId, n.spanId))!;
      return run.runId === n.runId && run.parentRun === n.parentRun ? [] : [{ traceId: n.traceId, spanId: n.spanId, ...run }];
    });
    await updateRuns(tx, tenant, changed);
  }
  return inserted;
}

/** What reindex_needed says while spans stored with derive off wait for `tapedeck reindex`. */
export const UNDERIVED_REASON = 'spans were stored with --derive off (TAPEDECK_DERIVE=off): they have no steps or runs yet';

/** The new spans as they are, with no run facts; resolves with the number written. */
async function writeUnderived(tx: Queryable, fresh: readonly SpanRecord[], tenant: string): Promise<number> {
  if (fresh.length === 0) return 0;
  function* spanRows(): Generator<unknown[]> {
    for (const s of fresh) yield [...spanToRow(tenant, s, null, null), null, null];
  }
  const inserted = await insertSpanRows(tx, spanRows());
  await tx.query('INSERT INTO tapedeck_store.reindex_needed (reason) VALUES ($1) ON CONFLICT DO NOTHING', [UNDERIVED_REASON]);
  return inserted;
}

/** Writes span rows (spanWriteColumns) of spans not stored yet; resolves with the number written. */
async function insertSpanRows(tx: Queryable, rows: Iterable<unknown[]>): Promise<number> {
  return tx.copyRows
    ? tx.copyRows('tapedeck_store.spans', spanCopyColumns, rows)
    : (await insertRows(tx, 'tapedeck_store.spans', spanWriteColumns, [...rows], 'ON CONFLICT (tenant, trace_id, span_id) DO NOTHING RETURNING 1')).length;
}

/** Derives all spans at once and upserts their steps (the INSERT path). */
async function insertSteps(
  tx: Queryable, spans: readonly SpanRecord[], tenant: string, derive: DeriveSpans, logsOf: (s: SpanRecord) => LogRecord[],
): Promise<Map<string, RunFacts>> {
  const derived = await derive(spans, logsOf);
  await upsertSteps(tx, tenant, derived);
  return new Map(spans.map((s, i) => [spanKey(s.traceId, s.spanId), { ownRun: derived[i].ownRun, ownParentRun: derived[i].ownParentRun }]));
}

/**
 * Derives one span at a time and streams the steps of new spans into a COPY, so only one
 * span's derived values are held at once; steps of spans stored before are upserted after.
 */
async function copySteps(
  tx: Queryable, spans: readonly SpanRecord[], tenant: string, derive: DeriveSpans, logsOf: (s: SpanRecord) => LogRecord[],
  isNew: (s: SpanRecord) => boolean,
): Promise<Map<string, RunFacts>> {
  const words = new TraceWords(); // of the copied steps; upsertSteps writes the restated ones'
  const facts = new Map<string, RunFacts>();
  const restated: DerivedSpan[] = [];
  async function* stepRows(): AsyncGenerator<unknown[]> {
    for (const span of spans) {
      const [d] = await derive([span], logsOf);
      facts.set(spanKey(span.traceId, span.spanId), { ownRun: d.ownRun, ownParentRun: d.ownParentRun });
      if (!d.step) continue;
      if (isNew(span)) {
        words.add(d.step);
        yield stepToRow(tenant, d.step);
      } else restated.push(d);
    }
  }
  await tx.copyRows!('tapedeck_store.steps', stepCopyColumns, stepRows());
  await writeTraceWords(tx, tenant, words);
  await upsertSteps(tx, tenant, restated);
  return facts;
}
