/**
 * @module runs/fork-runs
 * A run's forks: the runs a fork recorded (docs/forks.md), found by what their spans say
 * about themselves. A fork's spans name the origin as their parent run (so a fork is also a
 * child in the run tree, and this read uses the parent-run index) and carry
 * `tapedeck.fork.of` and `tapedeck.fork.at_step`. Earliest first, at most `limit`.
 */
import type { Queryable, QueryOptions } from '../store/database.js';

/** Span attributes a fork's spans carry. */
export const FORK_OF_KEY = 'tapedeck.fork.of';
export const FORK_AT_STEP_KEY = 'tapedeck.fork.at_step';

export interface ForkRun {
  /** the fork's own run id */
  run: string;
  /** the origin's step index where the fork parted from it */
  at_step: number;
  /** start of the fork's first span */
  first_start_ns: bigint;
  /** spans recorded for the fork so far */
  spans: number;
}

export interface ForkPage {
  forks: ForkRun[];
  /** more forks exist than `limit` */
  truncated: boolean;
}

export async function readForkRuns(
  db: Queryable,
  tenant: string,
  origin: string,
  limit: number,
  options: QueryOptions = {},
): Promise<ForkPage> {
  const rows = await db.query<{ run: string; at_step: string | null; first_start_ns: bigint; spans: bigint }>(
    `SELECT run_id AS run, min(attributes ->> '${FORK_AT_STEP_KEY}') AS at_step,
            min(start_ns) AS first_start_ns, count(*) AS spans
       FROM tapedeck_store.spans
      WHERE tenant = $1 AND parent_run = $2 AND run_id IS NOT NULL AND run_id <> $2
        AND attributes ->> '${FORK_OF_KEY}' = $2
      GROUP BY run_id
      ORDER BY min(start_ns), run_id
      LIMIT $3`,
    [tenant, origin, limit + 1],
    options,
  );
  const forks = rows.slice(0, limit).map((r) => ({
    run: r.run,
    at_step: Number(r.at_step),
    first_start_ns: BigInt(r.first_start_ns),
    spans: Number(r.spans),
  }));
  return { forks, truncated: rows.length > limit };
}
