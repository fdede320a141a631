/**
 * @module runs/child-runs
 * The child runs of a set of runs: runs whose parent run (tapes/resolve-runs.ts: named
 * explicitly, or a run started under a span of another run) is one of them. At most `limit`
 * per parent, earliest first (first span start, then run id), so one parent with a huge
 * fan-out costs one bounded answer.
 */
import type { Queryable, QueryOptions } from '../store/database.js';

export interface ChildRun {
  parent_run: string;
  run: string;
  first_start_ns: bigint;
}

export async function readChildRuns(
  db: Queryable,
  tenant: string,
  parents: readonly string[],
  limit: number,
  options: QueryOptions = {},
): Promise<ChildRun[]> {
  if (parents.length === 0) return [];
  const rows = await db.query<{ parent_run: string; run: string; first_start_ns: bigint }>(
    `SELECT parent_run, run, first_start_ns FROM (
       SELECT parent_run, run_id AS run, min(start_ns) AS first_start_ns,
              row_number() OVER (PARTITION BY parent_run ORDER BY min(start_ns), run_id) AS position
         FROM tapedeck_store.spans
        WHERE tenant = $1 AND parent_run = ANY($2::text[]) AND run_id IS NOT NULL AND run_id <> parent_run
        GROUP BY parent_run, run_id
     ) c
     WHERE position <= $3
     ORDER BY parent_run, first_start_ns, run`,
    [tenant, parents, limit],
    options,
  );
  return rows.map((r) => ({ parent_run: r.parent_run, run: r.run, first_start_ns: BigInt(r.first_start_ns) }));
}
