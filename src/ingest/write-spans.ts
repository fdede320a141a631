/**
 * @module ingest/write-spans
 * What ingestSpans does inside its one transaction, for spans already deduplicated: steps 1-4
 * for the traces no other transaction holds, then again for the others once they are free.
 * 1. lock the batch's traces (advisory locks, so a span and its log records meet);
 * 2. read the run facts of the traces' stored spans and the log records of the batch's spans;
 * 3. resolve runs in memory (tapes/run-resolution.ts), write the new spans with their run and
 *    update the stored spans whose run changed;
 * 4. derive each span (normalize, offload, digests), write the messages of the steps' lists
 *    the message store does not hold yet (tapes/message-rows.ts), then the steps, which name
 *    their messages by id; each with recall's words: a step's own text's, a new message's
 *    (recall/recorded-text.ts; a message's read ahead, as its chunk is derived).
 *
 * Under the locks, the stored spans read in step 2 are exactly the rows an INSERT ... ON
 * CONFLICT would find, so where the adapter has copyTuples (PostgreSQL server) new spans and
 * their steps are written with binary COPY; a redelivered span's step is upserted. There the
 * steps are derived chunk by chunk (derive/derive-thread.ts: on a worker thread) from before
 * step 1, as new spans without log records (derived again in step 3 when one is stored or has
 * some), while the transaction writes its free traces, waits for the others and writes the
 * spans (a span's run facts come from its attributes alone), and copied in step 4 once all
 * are derived and their messages stored. Without copyTuples (PGlite) the spans are derived
 * first, and every write is a multi-row INSERT with the same ON CONFLICT clauses as always.
 *
 * With derive off (derive null) steps 2-4 shrink to reading which spans are stored: the new
 * ones are written with no run facts, and the database records that `tapedeck reindex` has
 * spans to derive (tapedeck_store.reindex_needed).
 */
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import type { Queryable } from '../store/database.js';
import { copyColumnsOf, insertRows } from '../store/bulk-insert.js';
import { BinaryCopyWriter } from '../store/copy-binary.js';
import { resolveRunsInMemory, type RunNode } from '../tapes/run-resolution.js';
import { settleRunParents } from '../tapes/run-parents.js';
import { resolveRuns } from '../tapes/resolve-runs.js';
import { hexToBytes, spanToRow, spanWriteColumns } from '../tapes/span-rows.js';
import { spanKey } from '../tapes/span-tree.js';
import {
  distinct,
  lockTraces,
  readLogsFor,
  readRunNodes,
  tryLockTraces,
  updateRuns,
  upsertSteps,
} from '../tapes/trace-store.js';
import { fillMessageIds, ListedMessages, placeStep, stepCopyColumns } from '../derive/derive-chunk.js';
import { insertMessages, messagesOf, readWordsAhead } from '../tapes/message-rows.js';
import type { ChunkedDerive, DerivedChunk } from '../derive/derive-thread.js';
import { runFactsOf } from '../normalize/normalize.js';
import type { DeriveSpans, DerivedSpan } from '../tapes/derived-span.js';

const spanCopyColumns = copyColumnsOf(spanWriteColumns);

type RunFacts = Pick<DerivedSpan, 'ownRun' | 'ownParentRun'>;

/** How spans are derived: derive (all at once), and chunked (for COPY, possibly on a worker thread; null: none). */
export interface Deriving {
  derive: DeriveSpans;
  chunked: ChunkedDerive | null;
}

/**
 * Writes spans (distinct keys) and their steps; resolves with the number of new spans. The
 * traces no other transaction holds are locked and written first; then, once their holders
 * commit, the contested ones (tapes/trace-store.ts tryLockTraces). `inOrder`: every trace's
 * lock taken first, waiting in the one order that never deadlocks.
 */
export async function writeSpans(
  tx: Queryable,
  spans: readonly SpanRecord[],
  tenant: string,
  deriving: Deriving | null,
  inOrder = false,
): Promise<number> {
  const traceIds = traceIdsOf(spans);
  const chunked = deriving?.chunked && tx.copyTuples ? deriving.chunked : null;
  const contested = inOrder ? { traceIds, coarse: false } : await tryLockTraces(tx, traceIds);
  const parts = byContest(spans, new Set(contested.traceIds));
  // Most spans arrive once, before any log record of theirs: their steps are derived as new
  // and without log records while this transaction writes its free traces or waits for the
  // others (a run split between two requests, say, is held by the other until it commits).
  const derivations = parts.map((part) =>
    chunked && part.length > 0 ? new Derivation(chunked.chunks(tenant, part, everyNew, noLogs)) : null,
  );
  try {
    let written = 0;
    for (const [i, part] of parts.entries()) {
      if (part.length === 0) continue;
      if (part === parts[1]) await lockTraces(tx, contested.traceIds, contested.coarse);
      written += await writeLocked(tx, part, tenant, deriving, chunked, derivations, i);
    }
    return written;
  } finally {
    for (const d of derivations) await d?.stop();
  }
}

/**
 * Writes spans whose traces this transaction holds. `derivations[at]`: their steps derived
 * early, as new spans without log records (replaced there when that does not hold).
 */
async function writeLocked(
  tx: Queryable,
  spans: readonly SpanRecord[],
  tenant: string,
  deriving: Deriving | null,
  chunked: ChunkedDerive | null,
  derivations: (Derivation | null)[],
  at: number,
): Promise<number> {
  const traceIds = traceIdsOf(spans);
  const stored = await readRunNodes(tx, tenant, traceIds);
  const isNew = (s: SpanRecord) => !stored.has(spanKey(s.traceId, s.spanId));
  if (!deriving) return await writeUnderived(tx, spans.filter(isNew), tenant);
  const logs = await readLogsFor(tx, tenant, spans);
  const logsOf = (s: SpanRecord): LogRecord[] => logs.get(spanKey(s.traceId, s.spanId)) ?? [];
  if (!chunked) {
    const facts = await insertSteps(tx, spans, tenant, deriving.derive, logsOf);
    const { inserted, childRuns } = await writeSpansWithRuns(tx, tenant, traceIds, spans.filter(isNew), stored, facts);
    await settleRunParents(tx, tenant, traceIds.map(hexToBytes), childRuns);
    return inserted;
  }
  // Under the locks, what the early derivation assumed is known: derived again when a span
  // was stored before or has log records.
  if (logs.size > 0 || !spans.every(isNew)) {
    await derivations[at]?.stop();
    derivations[at] = null;
  }
  derivations[at] ??= new Derivation(chunked.chunks(tenant, spans, isNew, logsOf));
  return await writeDerived(tx, tenant, traceIds, spans, stored, derivations[at], deriving.derive, logsOf, isNew);
}

const everyNew = () => true;
const noLogs = (): LogRecord[] => [];

// A write's loops are module functions, not callbacks and generators made per call
// (docs/architecture.md, "Decisions and why").

/** The spans' trace ids, each once. */
function traceIdsOf(spans: readonly SpanRecord[]): string[] {
  const ids: string[] = [];
  for (const s of spans) ids.push(s.traceId);
  return distinct(ids);
}

/** The spans of traces this transaction holds, then those of `contested` traces. */
function byContest(spans: readonly SpanRecord[], contested: ReadonlySet<string>): [SpanRecord[], SpanRecord[]] {
  const free: SpanRecord[] = [];
  const waiting: SpanRecord[] = [];
  for (const s of spans) (contested.has(s.traceId) ? waiting : free).push(s);
  return [free, waiting];
}

/** Each span's run facts, read from its attributes alone, by span key. */
function runFactsByKey(spans: readonly SpanRecord[]): Map<string, RunFacts> {
  const facts = new Map<string, RunFacts>();
  for (const s of spans) {
    const f = runFactsOf(s);
    facts.set(spanKey(s.traceId, s.spanId), { ownRun: f.ownRun, ownParentRun: f.parentRun });
  }
  return facts;
}

/**
 * The spans and their steps, derived chunk by chunk (`derivation`) while the spans are written:
 * a span's run facts are read from its attributes alone, without the rest of its derivation.
 */
async function writeDerived(
  tx: Queryable,
  tenant: string,
  traceIds: readonly string[],
  spans: readonly SpanRecord[],
  stored: Map<string, RunNode>,
  derivation: Derivation,
  derive: DeriveSpans,
  logsOf: (s: SpanRecord) => LogRecord[],
  isNew: (s: SpanRecord) => boolean,
): Promise<number> {
  const facts = runFactsByKey(spans);
  const { inserted, childRuns } = await writeSpansWithRuns(tx, tenant, traceIds, spans.filter(isNew), stored, facts);
  await copySteps(tx, tenant, derivation, derive, logsOf, isNew);
  await settleRunParents(tx, tenant, traceIds.map(hexToBytes), childRuns);
  return inserted;
}

/**
 * Writes the new spans with their runs, resolved in memory over the traces' stored spans and
 * these, and updates the stored spans whose run changed; resolves with the number written and
 * the traces' runs that have a parent run (undefined when SQL resolved them).
 */
async function writeSpansWithRuns(
  tx: Queryable,
  tenant: string,
  traceIds: readonly string[],
  fresh: readonly SpanRecord[],
  stored: Map<string, RunNode>,
  facts: Map<string, RunFacts>,
): Promise<{ inserted: number; childRuns?: string[] }> {
  const nodes: RunNode[] = [...stored.values()];
  for (const s of fresh) {
    const f = facts.get(spanKey(s.traceId, s.spanId))!;
    nodes.push({
      traceId: s.traceId,
      spanId: s.spanId,
      parentSpanId: s.parentSpanId,
      ownRun: f.ownRun,
      ownParentRun: f.ownParentRun,
      runId: null,
      parentRun: null,
    });
  }
  const runs = resolveRunsInMemory(nodes);
  const inserted = await insertSpanRows(tx, spanRowsWithRuns(tenant, fresh, facts, runs));

  if (runs === 'ambiguous') {
    // Two parent runs for one run: let SQL's max() (and the server's collation) choose, as always.
    await resolveRuns(tx, tenant, traceIds.map(hexToBytes));
    return { inserted };
  }
  const changed = [...stored.values()].flatMap((n) => {
    const run = runs.get(spanKey(n.traceId, n.spanId))!;
    return run.runId === n.runId && run.parentRun === n.parentRun
      ? []
      : [{ traceId: n.traceId, spanId: n.spanId, ...run }];
  });
  await updateRuns(tx, tenant, changed);
  const childRuns = new Set<string>();
  for (const run of runs.values()) if (run.runId !== null && run.parentRun !== null) childRuns.add(run.runId);
  return { inserted, childRuns: [...childRuns] };
}

const noRun = { runId: null, parentRun: null };

/** The new spans' rows (spanWriteColumns) with their runs (none while ambiguous). */
function* spanRowsWithRuns(
  tenant: string,
  fresh: readonly SpanRecord[],
  facts: Map<string, RunFacts>,
  runs: ReturnType<typeof resolveRunsInMemory>,
): Generator<unknown[]> {
  for (const s of fresh) {
    const key = spanKey(s.traceId, s.spanId);
    const f = facts.get(key)!;
    const run = runs === 'ambiguous' ? noRun : runs.get(key)!;
    yield [...spanToRow(tenant, s, f.ownRun, f.ownParentRun), run.runId, run.parentRun];
  }
}

/** What reindex_needed says while spans stored with derive off wait for `tapedeck reindex`. */
export const UNDERIVED_REASON =
  'spans were stored with --derive off (TAPEDECK_DERIVE=off): they have no steps or runs yet';

/** The new spans as they are, with no run facts; resolves with the number written. */
async function writeUnderived(tx: Queryable, fresh: readonly SpanRecord[], tenant: string): Promise<number> {
  if (fresh.length === 0) return 0;
  function* spanRows(): Generator<unknown[]> {
    for (const s of fresh) yield [...spanToRow(tenant, s, null, null), null, null];
  }
  const inserted = await insertSpanRows(tx, spanRows());
  await tx.query('INSERT INTO tapedeck_store.reindex_needed (reason) VALUES ($1) ON CONFLICT DO NOTHING', [
    UNDERIVED_REASON,
  ]);
  return inserted;
}

/** Writes span rows (spanWriteColumns) of spans not stored yet; resolves with the number written. */
async function insertSpanRows(tx: Queryable, rows: Iterable<unknown[]>): Promise<number> {
  return tx.copyRows
    ? tx.copyRows('tapedeck_store.spans', spanCopyColumns, rows)
    : (
        await insertRows(
          tx,
          'tapedeck_store.spans',
          spanWriteColumns,
          [...rows],
          'ON CONFLICT (tenant, trace_id, span_id, end_ns) DO NOTHING RETURNING 1',
        )
      ).length;
}

/** Derives all spans at once and upserts their steps (the INSERT path). */
async function insertSteps(
  tx: Queryable,
  spans: readonly SpanRecord[],
  tenant: string,
  derive: DeriveSpans,
  logsOf: (s: SpanRecord) => LogRecord[],
): Promise<Map<string, RunFacts>> {
  const derived = await derive(spans, logsOf);
  await upsertSteps(tx, tenant, derived);
  return new Map(
    spans.map((s, i) => [
      spanKey(s.traceId, s.spanId),
      { ownRun: derived[i].ownRun, ownParentRun: derived[i].ownParentRun },
    ]),
  );
}

/** The encoded steps, each chunk's message ids filled in as it is sent. */
function* stepTuples(
  encoded: readonly Pick<DerivedChunk, 'steps' | 'messages' | 'slots' | 'slotMessages'>[],
  ids: Awaited<ReturnType<typeof insertMessages>>,
): Generator<Uint8Array> {
  for (const e of encoded) {
    fillMessageIds(e.steps, e.slots, e.slotMessages, e.messages, ids);
    yield* e.steps;
  }
}

/**
 * A transaction's chunks, taken from the deriver as soon as they are ready (so the worker
 * derives while the spans are written) and handed to copySteps in order. At most
 * READ_AHEAD_BYTES of encoded steps wait here while the spans are written: past that, the
 * deriver waits for copySteps to start taking them (steps name their messages by id, so it
 * is a bound for values held inline, tool arguments say, rather than for prompts).
 * Each chunk's messages have recall's words read as it comes (readWordsAhead).
 */
class Derivation {
  private readonly ready: DerivedChunk[] = [];
  private readyBytes = 0;
  private wakeReader: (() => void) | null = null;
  private wakeTaker: (() => void) | null = null;
  private stopped = false;
  private failure: { error: unknown } | null = null;
  private readonly done: Promise<void>;
  /** recall's words of the chunks' messages, read as each chunk comes (readWordsAhead) */
  private readonly wordsRead = new Map<string, Int32Array>();

  constructor(source: AsyncGenerator<DerivedChunk>) {
    this.done = this.take(source);
  }

  private async take(source: AsyncGenerator<DerivedChunk>): Promise<void> {
    try {
      for await (const chunk of source) {
        if (this.stopped) break; // ends the source, which cancels the rest of the job
        readWordsAhead(chunk.messages, this.wordsRead);
        this.ready.push(chunk);
        this.readyBytes += byteLengthOf(chunk.steps);
        this.wakeReader?.();
        while (this.readyBytes >= READ_AHEAD_BYTES && !this.stopped)
          await new Promise<void>((resolve) => {
            this.wakeTaker = resolve;
          });
        if (this.stopped) break; // rather than wait for (and ask for) one more chunk
      }
    } catch (error) {
      this.failure = { error };
    } finally {
      this.stopped = true;
      this.wakeReader?.();
    }
  }

  async *chunks(): AsyncGenerator<DerivedChunk> {
    for (;;) {
      const chunk = this.ready.shift();
      if (chunk) {
        this.readyBytes -= byteLengthOf(chunk.steps);
        this.wakeTaker?.();
        yield chunk;
        continue;
      }
      if (this.failure) throw this.failure.error;
      if (this.stopped) return;
      await new Promise<void>((resolve) => {
        this.wakeReader = resolve;
      });
    }
  }

  /** Stops taking chunks (the transaction is over) and waits for the taking to end. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.wakeTaker?.();
    await this.done;
  }
}

const READ_AHEAD_BYTES = 4 * 1024 * 1024;

/**
 * The memory a chunk's tuples hold: their buffers whole (pieces derived on this thread are
 * the used part of the writer's 256 KiB buffers; the worker's are one buffer of their own).
 */
function byteLengthOf(pieces: readonly Uint8Array[]): number {
  const buffers = new Set(pieces.map((p) => p.buffer));
  let bytes = 0;
  for (const b of buffers) bytes += b.byteLength;
  return bytes;
}

/**
 * Copies the encoded steps of new spans; spans with a value over the payload threshold are
 * derived here (they need the payload store). The steps name their messages by id, so the
 * chunks are all taken first, then every message of the transaction is stored (new and
 * restated steps' together, in one digest order, so this transaction never waits for a
 * message after it wrote one), and the ids go into the steps' slots before the COPY. Steps of
 * spans stored before are upserted after.
 */
async function copySteps(
  tx: Queryable,
  tenant: string,
  derivation: Derivation,
  derive: DeriveSpans,
  logsOf: (s: SpanRecord) => LogRecord[],
  isNew: (s: SpanRecord) => boolean,
): Promise<void> {
  const restated: DerivedSpan[] = [];
  const encoded: Pick<DerivedChunk, 'steps' | 'messages' | 'slots' | 'slotMessages'>[] = [];
  for await (const chunk of derivation.chunks()) {
    restated.push(...chunk.restated);
    encoded.push(chunk);
    if (chunk.local.length === 0) continue;
    const local = chunk.local.map((i) => chunk.spans[i]);
    const out = {
      steps: new BinaryCopyWriter(stepCopyColumns, { framed: false }),
      restated,
      messages: new ListedMessages(),
    };
    for (const [i, d] of (await derive(local, logsOf)).entries()) placeStep(tenant, d, isNew(local[i]), out);
    encoded.push({
      steps: out.steps.take(),
      messages: out.messages.messages,
      slots: Uint32Array.from(out.steps.slotOffsets()),
      slotMessages: out.messages.slotMessages(),
    });
  }
  const messages = encoded.flatMap((e) => e.messages);
  const ids = await insertMessages(tx, tenant, [
    ...messages,
    ...messagesOf(restated.flatMap((d) => (d.step ? [d.step] : []))),
  ]);
  await tx.copyTuples!('tapedeck_store.steps', stepCopyColumns, stepTuples(encoded, ids));
  if (restated.length > 0) await upsertSteps(tx, tenant, restated, ids);
}
