/**
 * What a query's plan reads a table by, and the statistics of a table growing faster than
 * ANALYZE follows it: for tests of look-ups that must probe their key whatever the planner
 * believes about the table.
 */
import type { Queryable } from '../../src/store/database.js';

/**
 * For each scan in the plan of `sql` of a relation or index whose name matches `name` (a
 * table, its partitions, their indexes): the condition it reads rows by (Index Cond, Recheck
 * Cond or TID Cond; '' for a scan of every row). The table an UPDATE writes is not a scan.
 */
export async function scanConditions(db: Queryable, sql: string, params: unknown[], name: RegExp): Promise<string[]> {
  const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
  const json = row['QUERY PLAN'];
  const plan = typeof json === 'string' ? JSON.parse(json) : json;
  const out: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    const scan = node['Node Type'] !== 'ModifyTable';
    if (scan && (name.test(String(node['Relation Name'] ?? '')) || name.test(String(node['Index Name'] ?? ''))))
      out.push(String(node['Index Cond'] ?? node['Recheck Cond'] ?? node['TID Cond'] ?? ''));
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk((plan as { Plan: Record<string, unknown> }[])[0].Plan);
  return out;
}

/**
 * Gives each table (and each of its partitions) the statistics a fast-growing table has
 * between two ANALYZEs, few rows on many pages, until `run` ends; then ANALYZE puts real ones
 * back.
 */
export async function withLaggingStatistics<T>(
  db: Queryable,
  tables: string | readonly string[],
  run: () => Promise<T>,
): Promise<T> {
  const names = typeof tables === 'string' ? [tables] : tables;
  await db.query(
    `UPDATE pg_class SET reltuples = 500, relpages = 200000
      WHERE oid = ANY($1::regclass[]) OR oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = ANY($1::regclass[]))`,
    [names],
  );
  try {
    return await run();
  } finally {
    for (const table of names) await db.query(`ANALYZE ${table}`);
  }
}
