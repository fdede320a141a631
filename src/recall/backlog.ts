/**
 * @module recall/backlog
 * Recall's index is written after the steps, not with them (0011_recall_backlog.sql): the
 * transaction that writes steps records their keys in tapedeck_store.recall_backlog, one row
 * per transaction, and indexBacklogRow later reads those steps back, finds their words
 * (recorded-text.ts) and writes them as rows of tapedeck_store.trace_words (trace-words.ts),
 * deleting the backlog row in the same transaction: a step is indexed once, whichever
 * replica or command does it, and a crash in between leaves the row to be done again.
 *
 * Why not in the steps' transaction: a step's words and their GIN entries cost more than the
 * rest of deriving (docs/benchmarks.md), and an OpenTelemetry sender whose export waits drops
 * spans once its queue is full. Ingest acknowledges what it stored; recall-indexer.ts
 * indexes when ingest leaves room, and recall catches up before it answers.
 */
import type { Database, Queryable } from '../store/database.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import { recordedStepOf, searchWords, type StepTextRow, stepTextColumns, withFullText } from './recorded-text.js';
import { TraceWords, writeTraceWords } from './trace-words.js';

export interface StepKey {
  traceId: string;
  spanId: string;
}

/** Records that these steps (written in this transaction) are to be indexed for recall. */
export async function enqueueSteps(tx: Queryable, tenant: string, keys: readonly StepKey[]): Promise<void> {
  if (keys.length === 0) return;
  const traceIds = Buffer.allocUnsafe(16 * keys.length);
  const spanIds = Buffer.allocUnsafe(8 * keys.length);
  keys.forEach((k, i) => {
    traceIds.write(k.traceId, 16 * i, 16, 'hex');
    spanIds.write(k.spanId, 8 * i, 8, 'hex');
  });
  await tx.query(
    'INSERT INTO tapedeck_store.recall_backlog (tenant, trace_ids, span_ids, steps) VALUES ($1, $2, $3, $4)',
    [tenant, traceIds, spanIds, keys.length],
  );
}

/** The oldest backlog row's number and age, or null when every stored step is indexed. */
export async function oldestBacklogRow(db: Queryable): Promise<{ id: bigint; ageMs: number } | null> {
  const [row] = await db.query<{ id: bigint | string | number; age_ms: number | string }>(
    `SELECT id, extract(epoch FROM clock_timestamp() - enqueued_at) * 1000 AS age_ms
       FROM tapedeck_store.recall_backlog ORDER BY id LIMIT 1`,
  );
  return row ? { id: BigInt(row.id), ageMs: Number(row.age_ms) } : null;
}

/** The last backlog row so far (0 when none was ever written): catching up means indexing up to it. */
export async function lastBacklogRow(db: Queryable): Promise<bigint> {
  const [row] = await db.query<{ last: bigint | string | number | null }>(
    `SELECT max(id) AS last FROM tapedeck_store.recall_backlog`,
  );
  return BigInt(row.last ?? 0);
}

/** Steps recorded in backlog rows up to `upTo` (all rows when absent) and not indexed yet. */
export async function backlogSteps(db: Queryable, upTo?: bigint): Promise<number> {
  const [row] = await db.query<{ steps: bigint | string | number | null }>(
    `SELECT sum(steps) AS steps FROM tapedeck_store.recall_backlog WHERE $1::bigint IS NULL OR id <= $1::bigint`,
    [upTo === undefined ? null : upTo.toString()],
  );
  return Number(row.steps ?? 0);
}

export interface IndexRowOptions {
  /** only rows numbered up to this one */
  upTo?: bigint;
  /**
   * true: pass over rows another transaction is indexing (the background indexer); false:
   * wait for it to end (catching up: its steps must be indexed before the answer)
   */
  skipLocked: boolean;
  signal?: AbortSignal;
}

/**
 * Text read back per statement, about: a row's steps are read in slices sized by the text of
 * the slice before (the first slice is FIRST_SLICE steps). Planning a statement has a fixed
 * cost, so steps of short prompts are read a whole backlog row at a time, while steps of long
 * ones stay a few MiB per statement.
 */
const SLICE_BYTES = 8 * 1024 * 1024;
const FIRST_SLICE = 64;

/**
 * Indexes the oldest backlog row free to take: reads its steps as stored now (a step erased
 * or no longer a step meanwhile is not there: nothing to index), resolves their offloaded
 * values (recall searches the full text; an unreadable payload contributes nothing), writes
 * their words and deletes the row, in one transaction. Resolves with the steps the row
 * recorded, or null when no row was taken: none left, or (skipLocked) all taken by others,
 * or (waiting) the one waited for was indexed by the other transaction.
 */
export async function indexBacklogRow(
  db: Database,
  payloads: PayloadStore,
  options: IndexRowOptions,
): Promise<number | null> {
  return db.transaction(async (tx) => {
    const [row] = await tx.query<{ id: bigint | string | number; tenant: string; steps: number }>(
      `SELECT id, tenant, steps FROM tapedeck_store.recall_backlog
        WHERE $1::bigint IS NULL OR id <= $1::bigint
        ORDER BY id LIMIT 1 FOR UPDATE${options.skipLocked ? ' SKIP LOCKED' : ''}`,
      [options.upTo === undefined ? null : options.upTo.toString()],
    );
    if (!row) return null;
    const words = new TraceWords();
    for (let from = 0, count = FIRST_SLICE; from < row.steps; ) {
      options.signal?.throwIfAborted();
      const steps = await tx.query<StepTextRow>(
        `SELECT ${stepTextColumns}
           FROM tapedeck_store.recall_backlog b
           CROSS JOIN generate_series($2::int, least($3::int, b.steps) - 1) AS i
           JOIN tapedeck_store.steps st
             ON st.tenant = b.tenant
            AND st.trace_id = substring(b.trace_ids FROM i * 16 + 1 FOR 16)
            AND st.span_id = substring(b.span_ids FROM i * 8 + 1 FOR 8)
          WHERE b.id = $1
          ORDER BY i`,
        [String(row.id), from, from + count],
      );
      let bytes = 0;
      for (const s of steps) {
        bytes += (s.request?.length ?? 0) + (s.response?.length ?? 0);
        const stored = recordedStepOf(s);
        // Most steps hold no reference: no need to walk their values for one.
        const offloaded = [s.request, s.response].some((text) => text?.includes('"$payload"'));
        const step = offloaded ? await withFullText(stored, payloads, options.signal) : stored;
        words.add({ traceId: s.trace_id, spanId: s.span_id, words: searchWords(step) });
      }
      from += count;
      count = Math.max(1, Math.floor((SLICE_BYTES * count) / Math.max(1, bytes)));
    }
    await writeTraceWords(tx, row.tenant, words);
    await tx.query('DELETE FROM tapedeck_store.recall_backlog WHERE id = $1', [String(row.id)]);
    return row.steps;
  });
}
