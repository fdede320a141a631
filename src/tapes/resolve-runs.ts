/**
 * @module tapes/resolve-runs
 * Run identity for every span of the given traces, whatever order the spans arrived in.
 *
 * A span's run is the run id it carries (own_run), else the run of its nearest ancestor,
 * else `trace:<trace_id>`. A span whose own run differs from its parent span's run starts a
 * child run: its parent_run is the parent span's run (trace parentage), unless the span named
 * a parent run explicitly. Re-resolving the whole trace on every write is what makes a
 * parent that arrives after its children fix the children's run. Which of several linked runs
 * is a run's parent is settled once the steps are stored (run-parents.ts).
 */
import { PREPARED, type Queryable } from '../store/database.js';
import { byTrace } from './key-probes.js';
import { type RunAt, writeRunsAt } from './trace-store.js';

export async function resolveRuns(tx: Queryable, tenant: string, traceIds: readonly Buffer[]): Promise<void> {
  if (traceIds.length === 0) return;
  // found and locked by one statement, written where found by the next
  await writeRunsAt(tx, await tx.query<RunAt>(RESOLVE_RUNS, [tenant, traceIds], PREPARED));
}

/**
 * The stored spans of these traces ($2) whose run is not what the rule says, locked, with
 * the run and parent run they take.
 */
export const RESOLVE_RUNS = `WITH RECURSIVE t AS (
     SELECT r.*
       FROM ${byTrace('trace_id, span_id, parent_span_id, own_run, own_parent_run, run_id AS stored_run, parent_run AS stored_parent')}
   ), tree AS (
     SELECT s.trace_id, s.span_id,
            COALESCE(s.own_run, 'trace:' || encode(s.trace_id, 'hex')) AS run_id,
            s.own_parent_run AS parent_run
     FROM t s
     WHERE s.parent_span_id IS NULL
        OR NOT EXISTS (SELECT 1 FROM t p WHERE p.trace_id = s.trace_id AND p.span_id = s.parent_span_id)
     UNION ALL
     SELECT c.trace_id, c.span_id,
            COALESCE(c.own_run, tree.run_id),
            CASE WHEN c.own_parent_run IS NOT NULL THEN c.own_parent_run
                 WHEN c.own_run IS NOT NULL AND c.own_run <> tree.run_id THEN tree.run_id
            END
     FROM t c JOIN tree ON c.trace_id = tree.trace_id AND c.parent_span_id = tree.span_id
   ), derived AS (
     -- parent_run is a property of the run: every span of a child run carries it.
     SELECT trace_id, span_id, run_id,
            max(parent_run) OVER (PARTITION BY run_id) AS parent_run
     FROM tree
     UNION ALL
     -- a span no root reaches (a parent chain that loops back on itself) still belongs to a run
     SELECT s.trace_id, s.span_id, COALESCE(s.own_run, 'trace:' || encode(s.trace_id, 'hex')), s.stored_parent
     FROM t s
     WHERE s.stored_run IS NULL
       AND NOT EXISTS (SELECT 1 FROM tree x WHERE x.trace_id = s.trace_id AND x.span_id = s.span_id)
   )
   SELECT s.tableoid::text AS t, s.ctid::text AS c, d.run_id, d.parent_run
     FROM derived d
     CROSS JOIN LATERAL (SELECT tableoid, ctid FROM tapedeck_store.spans
                          WHERE tenant = $1 AND trace_id = d.trace_id AND span_id = d.span_id
                            AND (run_id IS DISTINCT FROM d.run_id OR parent_run IS DISTINCT FROM d.parent_run)
                          FOR UPDATE) s`;
