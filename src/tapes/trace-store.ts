/**
 * @module tapes/trace-store
 * Reads and writes shared by ingest and reindex, all scoped to a set of traces.
 */
import { PREPARED, type Queryable } from '../store/database.js';
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import type { DerivedSpan } from './derived-span.js';
import { insertRows } from '../store/bulk-insert.js';
import { hexToBytes, logSelectList, rowToLogRecord, rowToSpanRecord, spanSelectList } from './span-rows.js';
import { type MessageIds, stepColumns, stepToRow, stepUpsertTail } from './step-rows.js';
import { insertMessages, messagesOf } from './message-rows.js';
import type { RunNode, RunOf } from './run-resolution.js';
import { byPair, byTrace, pairParams } from './key-probes.js';
import { spanKey } from './span-tree.js';

export const distinct = <T>(values: readonly T[]): T[] => [...new Set(values)];

/**
 * Writes (or rewrites) the steps and their messages, each with recall's words: the messages
 * first, since the steps name them by id. `ids`: the messages are stored already, with these.
 */
export async function upsertSteps(
  tx: Queryable,
  tenant: string,
  derived: readonly DerivedSpan[],
  ids?: MessageIds,
): Promise<void> {
  const steps = derived.flatMap((d) => (d.step ? [d.step] : []));
  const known = ids ?? (await insertMessages(tx, tenant, messagesOf(steps)));
  await insertRows(
    tx,
    'tapedeck_store.steps',
    stepColumns,
    steps.map((s) => stepToRow(tenant, s, known)),
    stepUpsertTail,
  );
}

/**
 * Writes to one trace take turns under transaction-scoped advisory locks, at most
 * TRACE_LOCK_BUCKETS of them per transaction however many traces it writes (a lock per trace
 * would grow with the batch until PostgreSQL's shared lock table runs out), and two
 * transactions of different traces rarely wait on each other:
 * - A transaction of up to FINE_LOCK_TRACES traces locks each trace (exclusive, a key from
 *   its full id) under a shared lock on each trace's bucket (the full id hashed into one of
 *   TRACE_LOCK_BUCKETS). Two such transactions wait only when they share a trace.
 * - A transaction of more traces locks their buckets exclusively: it waits for, and holds
 *   off, any other transaction with a trace in those buckets.
 * Buckets are locked before traces, each kind in ascending order, so two transactions never
 * wait on each other in a cycle. `coarse`: the buckets exclusively whatever the number of
 * traces (the rest of a transaction that locked its first traces that way: tryLockTraces).
 */
export async function lockTraces(tx: Queryable, traceIds: readonly string[], coarse = false): Promise<void> {
  if (traceIds.length === 0) return;
  const distinctIds = [...new Set(traceIds)];
  const buckets = traceLockKeys(distinctIds);
  if (coarse || distinctIds.length > FINE_LOCK_TRACES) {
    // unnest yields the keys in array order, and each is locked as its row is read
    await tx.query('SELECT count(pg_advisory_xact_lock(k)) FROM unnest($1::bigint[]) AS k', [buckets], PREPARED);
    return;
  }
  const traces = distinctIds.map(traceLockPair).sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  // UNION ALL runs its parts in order: every bucket before any trace. The two-key form is a
  // lock space of its own, apart from the buckets' one-key form.
  await tx.query(
    `SELECT count(pg_advisory_xact_lock_shared(k)) FROM unnest($1::bigint[]) AS k
     UNION ALL
     SELECT count(pg_advisory_xact_lock(a, b)) FROM unnest($2::int[], $3::int[]) AS t(a, b)`,
    [buckets, `{${traces.map((t) => t[0]).join(',')}}`, `{${traces.map((t) => t[1]).join(',')}}`],
    PREPARED,
  );
}

/** The traces tryLockTraces could not lock, and how the rest were locked (lockTraces' `coarse`). */
export interface Contested {
  traceIds: string[];
  coarse: boolean;
}

/**
 * Takes the locks lockTraces would, without waiting, for every trace no other transaction
 * holds; resolves with those another one holds. A transaction writes its free traces at once
 * and waits only for the contested ones (lockTraces), so requests that share a run, split
 * between them, do the rest of their work side by side rather than one after the other. Two
 * that each took a trace the other waits for then wait in a cycle, which PostgreSQL breaks
 * (deadlock, 40P01): the caller does the work again with lockTraces alone.
 */
export async function tryLockTraces(tx: Queryable, traceIds: readonly string[]): Promise<Contested> {
  const distinctIds = [...new Set(traceIds)];
  const coarse = distinctIds.length > FINE_LOCK_TRACES;
  if (distinctIds.length === 0) return { traceIds: [], coarse };
  if (coarse) {
    const rows = await tx.query<{ k: string }>(
      'SELECT k::text AS k FROM unnest($1::bigint[]) AS k WHERE pg_try_advisory_xact_lock(k)',
      [traceLockKeys(distinctIds)],
      PREPARED,
    );
    // a bucket locked frees every trace in it
    const locked = new Set(rows.map((r) => r.k));
    return { traceIds: distinctIds.filter((t) => !locked.has(bucketKey(t))), coarse };
  }
  const pairs = distinctIds.map(traceLockPair);
  // CASE: the trace's own lock only once its bucket's is granted
  const rows = await tx.query<{ i: number }>(
    `SELECT t.i::int AS i FROM unnest($1::bigint[], $2::int[], $3::int[]) WITH ORDINALITY AS t(k, a, b, i)
      WHERE CASE WHEN pg_try_advisory_xact_lock_shared(t.k) THEN pg_try_advisory_xact_lock(t.a, t.b) ELSE false END`,
    [distinctIds.map(bucketKey), `{${pairs.map(firstOfPair).join(',')}}`, `{${pairs.map(secondOfPair).join(',')}}`],
    PREPARED,
  );
  const locked = new Set<number>();
  for (const r of rows) locked.add(r.i - 1);
  const contested: string[] = [];
  for (let i = 0; i < distinctIds.length; i++) if (!locked.has(i)) contested.push(distinctIds[i]);
  return { traceIds: contested, coarse };
}

/**
 * Buckets a transaction locks at most; with several replicas of eight connections each, well
 * inside the default lock table (64 x 100 connections).
 */
export const TRACE_LOCK_BUCKETS = 128;

/**
 * Traces a transaction locks one by one: their buckets (shared) and themselves make at most
 * TRACE_LOCK_BUCKETS locks. A request of 512 spans from agent runs of eight spans has 64.
 */
export const FINE_LOCK_TRACES = TRACE_LOCK_BUCKETS / 2;

/**
 * The distinct advisory lock keys of these traces' buckets, ascending. The key space is
 * offset so a bucket's key cannot be mistaken for a small number some other advisory lock
 * might use.
 */
export function traceLockKeys(traceIds: readonly string[]): string[] {
  const buckets = new Set<number>();
  for (const t of traceIds) buckets.add(traceLockBucket(t));
  return [...buckets].sort((a, b) => a - b).map((b) => String(TRACE_LOCK_KEY_BASE + b));
}

/** The advisory lock key of a trace's bucket. */
const bucketKey = (traceId: string) => String(TRACE_LOCK_KEY_BASE + traceLockBucket(traceId));

const TRACE_LOCK_KEY_BASE = 0x7464_0000_0000; // "td" in the high bytes

/** The bucket of a trace: its full id hashed (traceHash), into TRACE_LOCK_BUCKETS. */
export function traceLockBucket(traceId: string): number {
  return traceHash(traceId, 0x811c9dc5) % TRACE_LOCK_BUCKETS;
}

/** A trace's own lock: two 32-bit hashes of its full id, as signed int4s. */
export function traceLockPair(traceId: string): [number, number] {
  return [traceHash(traceId, 0x811c9dc5) | 0, traceHash(traceId, 0x050c5d1f) | 0];
}

/** FNV-1a (32-bit, from `seed`) over all 32 hex digits of the trace id, mixed (murmur3's finalizer). */
function traceHash(traceId: string, seed: number): number {
  let h = seed;
  for (let i = 0; i < traceId.length; i++) {
    h ^= traceId.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

// Module functions, not callbacks made per call (docs/architecture.md, "Decisions and why").
const firstOfPair = (p: readonly [number, number]) => p[0];
const secondOfPair = (p: readonly [number, number]) => p[1];

/** Each span's trace and span id. */
function spanKeyPairs(spans: readonly SpanRecord[]): (readonly [string, string])[] {
  const pairs: (readonly [string, string])[] = [];
  for (const s of spans) pairs.push([s.traceId, s.spanId]);
  return pairs;
}

export async function readLogsFor(
  tx: Queryable,
  tenant: string,
  spans: readonly SpanRecord[],
): Promise<Map<string, LogRecord[]>> {
  const rows = await tx.query(STORED_LOGS, [tenant, ...pairParams(spanKeyPairs(spans))], PREPARED);
  const bySpan = new Map<string, LogRecord[]>();
  for (const row of rows) {
    const log = rowToLogRecord(row);
    const key = spanKey(log.traceId!, log.spanId!);
    const list = bySpan.get(key);
    if (list) list.push(log);
    else bySpan.set(key, [log]);
  }
  return bySpan;
}

/** The run facts of the stored spans of these traces ($2). */
export const STORED_RUN_NODES = `SELECT encode(r.trace_id, 'hex') AS trace_id, encode(r.span_id, 'hex') AS span_id,
       encode(r.parent_span_id, 'hex') AS parent_span_id, r.own_run, r.own_parent_run, r.run_id, r.parent_run
  FROM ${byTrace('trace_id, span_id, parent_span_id, own_run, own_parent_run, run_id, parent_run')}`;

/** The log records of these (trace, span) pairs ($2, $3), in time order. */
export const STORED_LOGS = `SELECT r.*
  FROM ${byPair(`${logSelectList}, received_at, position, record_key`, 'tapedeck_store.logs')}
 ORDER BY r.time_ns, r.received_at, r.position, r.record_key`;

/** The stored spans of these (trace, span) pairs ($2, $3). */
export const STORED_SPANS = `SELECT r.* FROM ${byPair(spanSelectList, 'tapedeck_store.spans')}`;

export async function readSpans(
  tx: Queryable,
  tenant: string,
  ids: readonly [string, string][],
): Promise<SpanRecord[]> {
  const rows = await tx.query(STORED_SPANS, [tenant, ...pairParams(ids)], PREPARED);
  return rows.map(rowToSpanRecord);
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
  }>(STORED_RUN_NODES, [tenant, traceIds.map(hexToBytes)], PREPARED);
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

/**
 * The stored spans of these (trace, span) pairs ($2, $3), locked: where each row is (partition
 * and ctid) and which pair it answers ($2's index, from 1).
 */
export const LOCK_SPANS = `SELECT r.tableoid::text AS t, r.ctid::text AS c, k.n::int AS n
  FROM ${byPair('tableoid, ctid', 'tapedeck_store.spans', true)}`;

/** Sets run_id and parent_run ($3, $4) of rows a locking read found ($1 partitions, $2 ctids). */
export const UPDATE_RUNS = `UPDATE tapedeck_store.spans s SET run_id = u.run_id, parent_run = u.parent_run
    FROM unnest($1::oid[], $2::tid[], $3::text[], $4::text[]) AS u(t, c, run_id, parent_run)
   WHERE s.tableoid = u.t AND s.ctid = u.c`;

/** A stored span's row as a read that locked it found it (partition, ctid), and its new run. */
export interface RunAt {
  t: string;
  c: string;
  run_id: string | null;
  parent_run: string | null;
}

/**
 * Writes each row's run where a locking read of this transaction found it. Joined to the
 * spans by key, such an update could be planned as a scan of the tenant's spans, as `= ANY`
 * could; and locked by an earlier statement, no concurrent update can move a row in between
 * (a ctid read in the updating statement itself would then miss it).
 */
export async function writeRunsAt(tx: Queryable, rows: readonly RunAt[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.query(
    UPDATE_RUNS,
    [rows.map((r) => r.t), rows.map((r) => r.c), rows.map((r) => r.run_id), rows.map((r) => r.parent_run)],
    PREPARED,
  );
}

/** Sets run_id and parent_run of stored spans (those whose run changed, each once). */
export async function updateRuns(
  tx: Queryable,
  tenant: string,
  changes: readonly (RunOf & { traceId: string; spanId: string })[],
): Promise<void> {
  if (changes.length === 0) return;
  // LOCK_SPANS answers with the index of the pair: each pair once, so it names its change
  const once = [...new Map(changes.map((c) => [spanKey(c.traceId, c.spanId), c])).values()];
  const found = await tx.query<{ t: string; c: string; n: number }>(
    LOCK_SPANS,
    [tenant, ...pairParams(once.map((c) => [c.traceId, c.spanId] as const))],
    PREPARED,
  );
  await writeRunsAt(
    tx,
    found.map(({ t, c, n }) => {
      const change = once[Number(n) - 1];
      return { t, c, run_id: change.runId, parent_run: change.parentRun };
    }),
  );
}
