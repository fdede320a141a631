/**
 * @module erasure/erase-rows
 * Deletes stored spans and everything derived from them, in the caller's transaction: the
 * spans chosen into the temporary table erased_spans, their steps, their log records (and the
 * records of their traces no remaining span claims), the messages of the message store no
 * remaining step references (recall's words go with the steps and messages that hold them). Erasure
 * (erasures.ts) and retention (retention.ts) both delete through here, so both leave the same
 * store behind.
 *
 * Payloads are not deleted here: what comes back is the payloads the deleted steps referenced
 * that no remaining step references, for the caller to purge after commit.
 */
import type { Queryable } from '../store/database.js';
import { lockTraces } from '../tapes/trace-store.js';
import { deletingMessages } from '../tapes/message-rows.js';
import { storedJson } from '../json/json-value.js';
import { wordIds } from '../recall/word-hash.js';
import { ownWords, type StoredStepText, stepKey, storedStepTextColumns } from './kept-words.js';

export interface DeletedCounts {
  spans: number;
  steps: number;
  log_records: number;
  recall_index_rows: number;
  runs: number;
}

export interface ErasedRows {
  counts: DeletedCounts;
  /** payloads the deleted steps referenced and nothing left references */
  unreferencedPayloads: string[];
  /** runs left without a span, as "tenant\u0000run" */
  runsGone: string[];
  /** traces spans were deleted from, as "tenant\u0000trace hex" */
  traces: string[];
  /** the spans deleted, as "tenant\u0000trace hex/span hex", when at most LISTED_SPANS */
  spans: string[];
}

/** Spans listed one by one for replays to check (a larger erasure is a run, trace or tenant). */
const LISTED_SPANS = 10_000;

/** Creates the temporary tables this transaction chooses spans (and steps to derive again) into. */
export async function prepareErasure(tx: Queryable): Promise<void> {
  await tx.exec(`
    CREATE TEMP TABLE erased_spans (
      tenant text NOT NULL, trace_id bytea NOT NULL, span_id bytea NOT NULL, run_id text,
      PRIMARY KEY (tenant, trace_id, span_id)) ON COMMIT DROP;
    CREATE TEMP TABLE reindexed_steps (
      tenant text NOT NULL, trace_id bytea NOT NULL, span_id bytea NOT NULL,
      PRIMARY KEY (tenant, trace_id, span_id)) ON COMMIT DROP;
    CREATE TEMP TABLE erased_refs (digest text NOT NULL) ON COMMIT DROP;
    CREATE TEMP TABLE erased_messages (tenant text NOT NULL, id bigint NOT NULL) ON COMMIT DROP;`);
}

/** Chooses the spans `where` (over tapedeck_store.spans s) selects; returns how many. */
export async function chooseSpans(
  tx: Queryable,
  where: string,
  params: readonly unknown[],
  limit?: number,
): Promise<number> {
  const rows = await tx.query<{ n: number | bigint }>(
    `WITH chosen AS (
       INSERT INTO erased_spans (tenant, trace_id, span_id, run_id)
       SELECT s.tenant, s.trace_id, s.span_id, s.run_id FROM tapedeck_store.spans s
        WHERE ${where}${limit === undefined ? '' : ` ORDER BY s.end_ns LIMIT ${Math.floor(limit)}`}
       ON CONFLICT DO NOTHING RETURNING 1)
     SELECT count(*) AS n FROM chosen`,
    params,
  );
  return Number(rows[0].n);
}

/** Deletes the chosen spans and what derives from them; see the module comment. */
export interface EraseOptions {
  /** the chosen spans are this whole tenant: its log records and index rows go by tenant */
  wholeTenant?: string;
  /**
   * the chosen spans are gone already, with the partition retention detached them in
   * (retention.ts): they are counted, not deleted
   */
  spansGone?: boolean;
  /**
   * the words steps in reindexed_steps keep, by stepKey, where their stored text is not all
   * they keep (kept-words.ts); the others are worded from their stored text
   */
  keptWords?: ReadonlyMap<string, Int32Array>;
}

export async function eraseChosen(tx: Queryable, options: EraseOptions = {}): Promise<ErasedRows> {
  // A temporary table has no statistics until analyzed: without them the planner may read
  // every span to join a handful.
  await tx.exec('ANALYZE erased_spans; ANALYZE reindexed_steps');
  const count = async (sql: string, params: readonly unknown[] = []) =>
    Number((await tx.query<{ n: number | bigint }>(sql, params))[0].n);
  const key = (a: string, b: string) =>
    `${a}.tenant = ${b}.tenant AND ${a}.trace_id = ${b}.trace_id AND ${a}.span_id = ${b}.span_id`;

  const traces = await tx.query<{ tenant: string; trace_id: string }>(
    `SELECT DISTINCT tenant, encode(trace_id, 'hex') AS trace_id FROM erased_spans`,
  );
  // Ingest writes a trace's spans and steps holding its trace lock, and late log records
  // re-derive the steps of spans already stored. Taking the same locks here means a step is
  // either written before these deletes (and deleted by them) or finds its span gone.
  await lockTraces(
    tx,
    traces.map((t) => t.trace_id),
  );
  const spanKeys = await tx.query<{ tenant: string; trace_id: string; span_id: string }>(
    `SELECT tenant, encode(trace_id, 'hex') AS trace_id, encode(span_id, 'hex') AS span_id
       FROM erased_spans WHERE (SELECT count(*) FROM erased_spans) <= ${LISTED_SPANS}`,
  );
  const spans = options.spansGone
    ? await count('SELECT count(*) AS n FROM erased_spans')
    : await count(
        `WITH d AS (DELETE FROM tapedeck_store.spans s USING erased_spans e WHERE ${key('s', 'e')} RETURNING 1)
         SELECT count(*) AS n FROM d`,
      );
  const steps = await count(
    `WITH d AS (
       DELETE FROM tapedeck_store.steps st USING erased_spans e WHERE ${key('st', 'e')}
       RETURNING tapedeck_store.payload_ref_of(st.request) AS a, tapedeck_store.payload_ref_of(st.response) AS b,
                 st.tenant, st.request_messages, st.response_messages),
     r AS (INSERT INTO erased_refs (digest)
           SELECT a FROM d WHERE a IS NOT NULL UNION SELECT b FROM d WHERE b IS NOT NULL),
     m AS (INSERT INTO erased_messages (tenant, id)
           SELECT DISTINCT d.tenant, u.id
             FROM d CROSS JOIN LATERAL unnest(d.request_messages || d.response_messages) AS u(id))
     SELECT count(*) AS n FROM d`,
  );
  await deleteUnreferencedMessages(tx);
  await rewordSteps(tx, options.keptWords);
  // A trace's records that no remaining span claims (their span erased, or never stored).
  const logRecords =
    options.wholeTenant !== undefined
      ? await count(
          `WITH d AS (DELETE FROM tapedeck_store.logs l WHERE l.tenant = $1 RETURNING 1) SELECT count(*) AS n FROM d`,
          [options.wholeTenant],
        )
      : await count(
          `WITH t AS (SELECT DISTINCT tenant, trace_id FROM erased_spans),
           d AS (DELETE FROM tapedeck_store.logs l USING t
                  WHERE l.tenant = t.tenant AND l.trace_id = t.trace_id
                    AND NOT EXISTS (SELECT 1 FROM tapedeck_store.spans s
                                     WHERE s.tenant = l.tenant AND s.trace_id = l.trace_id AND s.span_id = l.span_id)
                 RETURNING 1)
           SELECT count(*) AS n FROM d`,
        );
  const runsGone = await tx.query<{ tenant: string; run_id: string }>(
    `SELECT r.tenant, r.run_id FROM (SELECT DISTINCT tenant, run_id FROM erased_spans WHERE run_id IS NOT NULL) r
      WHERE NOT EXISTS (SELECT 1 FROM tapedeck_store.spans s WHERE s.tenant = r.tenant AND s.run_id = r.run_id)`,
  );
  const payloads = await tx.query<{ digest: string }>(
    `SELECT DISTINCT r.digest FROM erased_refs r
      WHERE NOT EXISTS (SELECT 1 FROM tapedeck_store.steps st WHERE tapedeck_store.payload_ref_of(st.request) = r.digest)
        AND NOT EXISTS (SELECT 1 FROM tapedeck_store.steps st WHERE tapedeck_store.payload_ref_of(st.response) = r.digest)
      ORDER BY r.digest`,
  );
  return {
    counts: { spans, steps, log_records: logRecords, recall_index_rows: 0, runs: runsGone.length },
    unreferencedPayloads: payloads.map((p) => p.digest),
    runsGone: runsGone.map((r) => `${r.tenant}\u0000${r.run_id}`),
    traces: traces.map((t) => `${t.tenant}\u0000${t.trace_id}`),
    spans: spanKeys.map((r) => `${r.tenant}\u0000${r.trace_id}/${r.span_id}`),
  };
}

/**
 * The messages the deleted steps referenced that no remaining step references (a message two
 * runs share stays until the last of them goes), with their recall postings.
 */
async function deleteUnreferencedMessages(tx: Queryable): Promise<void> {
  await tx.query(deletingMessages('SELECT DISTINCT tenant, id FROM erased_messages'));
}

/**
 * The steps in reindexed_steps that remain (their offloaded value erased by name) get recall's
 * words anew: a payload reference holds no words, so the erased text is no longer found. The
 * words of another offloaded value of the same step come from `kept` (read before the
 * transaction, kept-words.ts).
 */
async function rewordSteps(tx: Queryable, kept: ReadonlyMap<string, Int32Array> | undefined): Promise<void> {
  const steps = await tx.query<StoredStepText>(
    `SELECT ${storedStepTextColumns}
       FROM tapedeck_store.steps st JOIN reindexed_steps r USING (tenant, trace_id, span_id)`,
  );
  for (const st of steps) {
    const words =
      kept?.get(stepKey(st.tenant, st.trace_id, st.span_id)) ??
      ownWords(st, storedJson(st.request), storedJson(st.response));
    await tx.query(
      `UPDATE tapedeck_store.steps SET words = $4::bigint[]
        WHERE tenant = $1 AND trace_id = decode($2, 'hex') AND span_id = decode($3, 'hex')`,
      [st.tenant, st.trace_id, st.span_id, wordIds(words)],
    );
  }
}
