/**
 * @module tapes/child-runs
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
    // a probe of each parent's child runs: with `parent_run = ANY`, PostgreSQL read the
    // tenant's child-run spans whole when its statistics lagged
    `SELECT p.parent_run, c.run, c.first_start_ns
       FROM (SELECT DISTINCT unnest($2::text[]) AS parent_run) p
       CROSS JOIN LATERAL (
         SELECT run_id AS run, min(start_ns) AS first_start_ns
           FROM tapedeck_store.spans
          WHERE tenant = $1 AND parent_run = p.parent_run AND run_id IS NOT NULL AND run_id <> p.parent_run
          GROUP BY run_id
          ORDER BY min(start_ns), run_id
          LIMIT $3) c
      ORDER BY p.parent_run, c.first_start_ns, c.run`,
    [tenant, parents, limit],
    options,
  );
  return rows.map((r) => ({ parent_run: r.parent_run, run: r.run, first_start_ns: BigInt(r.first_start_ns) }));
}
