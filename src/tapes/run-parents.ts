/**
 * @module tapes/run-parents
 * One parent run per run, settled after a write's steps are stored. Run resolution
 * (resolve-runs.ts, run-resolution.ts) links a child run to the run of the span it started
 * under, or to the run a span names, per batch of traces and without knowing which spans are
 * steps. A session spread over several traces whose roots carry no session key links to one
 * `trace:<id>` run per trace, most of them a bare wrapper span with no step. So, for every
 * child run of the written traces, over all its spans in every trace:
 * - a `trace:<id>` run that holds no step is never its parent;
 * - of the runs left, the greatest in byte order (`COLLATE "C"`) is, so the choice does not
 *   depend on the order spans arrived in, on how they were batched, nor on the server's
 *   collation;
 * - every span of the run carries it (parent_run is a property of the run).
 */
import { PREPARED, type Queryable } from '../store/database.js';
import { byTrace } from './key-probes.js';
import { type RunAt, writeRunsAt } from './trace-store.js';

/**
 * `childRuns`: the runs of these traces that have a parent run, when the caller resolved them
 * (ingest, in memory); otherwise they are read from the stored spans.
 */
export async function settleRunParents(
  tx: Queryable,
  tenant: string,
  traceIds: readonly Buffer[],
  childRuns?: readonly string[],
): Promise<void> {
  if (traceIds.length === 0) return;
  // Most writes start no child run, and then there is nothing more to do. Asked inside the
  // statement below, the planner could scan every stored span on each write.
  const children =
    childRuns ?? (await tx.query<{ run_id: string }>(CHILD_RUNS, [tenant, traceIds], PREPARED)).map((c) => c.run_id);
  if (children.length === 0) return;
  // found and locked by one statement, written where found by the next
  await writeRunsAt(tx, await tx.query<RunAt>(SETTLE_PARENTS, [tenant, children], PREPARED));
}

/**
 * The runs with a parent run among the stored spans of these traces ($2). The filter stays
 * outside the probe, so no partial index on parent_run can stand in for the key.
 */
export const CHILD_RUNS = `SELECT DISTINCT r.run_id FROM ${byTrace('run_id, parent_run')}
   WHERE r.run_id IS NOT NULL AND r.parent_run IS NOT NULL`;

/**
 * The spans of each child run of $2 whose parent run is not the one the rules above choose,
 * locked, with their run and that parent run, for writeRunsAt. Every read of the
 * spans and steps is a probe of its key (key-probes.ts), whatever the statistics say; the
 * EXISTS stays a probe too (OFFSET 0): under lagging statistics PostgreSQL answered it from a
 * hash of every step of the tenant.
 */
export const SETTLE_PARENTS = `WITH child_runs AS (
    SELECT DISTINCT unnest($2::text[]) AS run_id
  ), links AS (
    -- the run each span links to: the one it names, else the run of its parent span when that differs
    SELECT r.run_id, COALESCE(s.own_parent_run, p.run_id) AS candidate
      FROM child_runs r
      CROSS JOIN LATERAL (SELECT trace_id, parent_span_id, own_parent_run FROM tapedeck_store.spans
                           WHERE tenant = $1 AND run_id = r.run_id OFFSET 0) s
      LEFT JOIN LATERAL (SELECT run_id FROM tapedeck_store.spans
                          WHERE tenant = $1 AND trace_id = s.trace_id AND span_id = s.parent_span_id OFFSET 0) p
        ON true
     WHERE s.own_parent_run IS NOT NULL OR p.run_id <> r.run_id
  ), chosen AS MATERIALIZED (
    SELECT r.run_id,
           (SELECT max(l.candidate COLLATE "C")
              FROM links l
             WHERE l.run_id = r.run_id AND l.candidate <> r.run_id
               AND (l.candidate NOT LIKE 'trace:%'
                    OR EXISTS (SELECT 1 FROM tapedeck_store.spans ps
                                CROSS JOIN LATERAL (SELECT 1 FROM tapedeck_store.steps
                                                     WHERE tenant = $1 AND trace_id = ps.trace_id
                                                       AND span_id = ps.span_id OFFSET 0) st
                               WHERE ps.tenant = $1 AND ps.run_id = l.candidate OFFSET 0))) AS parent_run
      FROM child_runs r
  )
  SELECT s.tableoid::text AS t, s.ctid::text AS c, c.run_id, c.parent_run
    FROM chosen c
    CROSS JOIN LATERAL (SELECT tableoid, ctid FROM tapedeck_store.spans
                         WHERE tenant = $1 AND run_id = c.run_id AND parent_run IS DISTINCT FROM c.parent_run
                         FOR UPDATE) s`;
