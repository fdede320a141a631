/**
 * @module runs/run-pages
 * Run facts (first start, parent run, outcome, span count) straight from the spans table, for
 * the reads that touch many runs: export pages and tree levels.
 *
 * Why not the tapedeck.runs view: it aggregates every span of the store before a filter on
 * its output applies (a page costs as much as the whole store: docs/benchmarks.md), and its `tenant IS NOT
 * DISTINCT FROM` cannot use the (tenant, run_id) index. Here the tenant is compared as stored
 * and the aggregate walks spans_run_idx in run id order, so a page costs one page.
 *
 * `outcome` is the view's own rule, the SQL function tapedeck_store.run_outcome, applied to
 * the page's runs only. The view is the reference: test/integration/runs-facts.test.ts holds
 * every fact here equal to it.
 */
import type { Queryable, QueryOptions } from '../store/database.js';
import type { RunSummary } from '../tapes/run-reader.js';

export interface RunWindow {
  /** runs that started at or after this time (Unix ns); null: no bound */
  since: bigint | null;
  /** runs that started before this time (Unix ns); null: no bound */
  until: bigint | null;
}

export interface RunFacts {
  run: string;
  parent_run: string | null;
  outcome: RunSummary['outcome'];
  first_start_ns: bigint;
  spans: number;
}

const OUTCOME = 'tapedeck_store.run_outcome($1, r.run, r.last_end_ns)';

function query(where: string, having: string, tail: string): string {
  return `SELECT r.run, r.parent_run, r.first_start_ns, r.spans, ${OUTCOME} AS outcome
    FROM (SELECT run_id AS run, max(parent_run) AS parent_run, count(*) AS spans,
                 min(start_ns) AS first_start_ns, max(end_ns) AS last_end_ns
            FROM tapedeck_store.spans
           WHERE tenant = $1 AND run_id IS NOT NULL ${where}
           GROUP BY run_id ${having}
           ${tail}) r
   ORDER BY r.run`;
}

function windowHaving(window: RunWindow, params: unknown[]): string {
  const conditions: string[] = [];
  if (window.since !== null) {
    params.push(window.since.toString());
    conditions.push(`min(start_ns) >= $${params.length}::bigint`);
  }
  if (window.until !== null) {
    params.push(window.until.toString());
    conditions.push(`min(start_ns) < $${params.length}::bigint`);
  }
  return conditions.length ? `HAVING ${conditions.join(' AND ')}` : '';
}

interface Row {
  run: string;
  parent_run: string | null;
  first_start_ns: bigint;
  spans: bigint | number;
  outcome: RunFacts['outcome'];
}
const toFacts = (r: Row): RunFacts => ({
  run: r.run,
  parent_run: r.parent_run ?? null,
  outcome: r.outcome,
  first_start_ns: BigInt(r.first_start_ns),
  spans: Number(r.spans),
});

/** The next `limit` runs after `after` (a run id; null: from the start) that started within the window, in run id order. */
export async function pageRuns(
  db: Queryable,
  tenant: string,
  window: RunWindow,
  after: string | null,
  limit: number,
  options: QueryOptions = {},
): Promise<RunFacts[]> {
  const params: unknown[] = [tenant, limit];
  let where = '';
  if (after !== null) {
    params.push(after);
    where = `AND run_id > $${params.length}::text`;
  }
  const rows = await db.query<Row>(
    query(where, windowHaving(window, params), 'ORDER BY run_id LIMIT $2'),
    params,
    options,
  );
  return rows.map(toFacts);
}

/** The facts of each named run that exists. */
export async function readRunFacts(
  db: Queryable,
  tenant: string,
  runs: readonly string[],
  options: QueryOptions = {},
): Promise<Map<string, RunFacts>> {
  if (runs.length === 0) return new Map();
  const rows = await db.query<Row>(query('AND run_id = ANY($2::text[])', '', ''), [tenant, runs], options);
  return new Map(rows.map((r) => [r.run, toFacts(r)]));
}

/** How many runs started within the window (for a progress bar). */
export async function countRuns(db: Queryable, tenant: string, window: RunWindow): Promise<number> {
  const params: unknown[] = [tenant];
  const having = windowHaving(window, params);
  const rows = await db.query<{ n: bigint }>(
    `SELECT count(*) AS n FROM (SELECT 1 FROM tapedeck_store.spans WHERE tenant = $1 AND run_id IS NOT NULL GROUP BY run_id ${having}) r`,
    params,
  );
  return Number(rows[0]?.n ?? 0);
}
