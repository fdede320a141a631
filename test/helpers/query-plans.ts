/**
 * What a query's plan reads a table by, and the statistics of a table growing faster than
 * ANALYZE follows it: for tests of look-ups that must probe their key whatever the planner
 * believes about the table.
 */
import type { Database, Queryable } from '../../src/store/database.js';

/** A scan in a plan: the relation (or index) it reads, and the condition it reads rows by. */
export interface PlannedScan {
  relation: string;
  /** Index Cond, Recheck Cond or TID Cond; '' for a scan of every row */
  by: string;
}

/**
 * Each scan in the plan of `sql` of a relation or index whose name matches `name` (a table,
 * its partitions, their indexes). The table an UPDATE writes is not a scan.
 */
export async function plannedScans(
  db: Queryable,
  sql: string,
  params: unknown[],
  name: RegExp,
): Promise<PlannedScan[]> {
  const [row] = await db.query<{ 'QUERY PLAN': unknown }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
  const json = row['QUERY PLAN'];
  const plan = typeof json === 'string' ? JSON.parse(json) : json;
  const out: PlannedScan[] = [];
  const walk = (node: Record<string, unknown>) => {
    const relation = String(node['Relation Name'] ?? node['Index Name'] ?? '');
    if (node['Node Type'] !== 'ModifyTable' && name.test(relation))
      out.push({ relation, by: String(node['Index Cond'] ?? node['Recheck Cond'] ?? node['TID Cond'] ?? '') });
    for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) walk(child);
  };
  walk((plan as { Plan: Record<string, unknown> }[])[0].Plan);
  return out;
}

/** The conditions of plannedScans alone. */
export async function scanConditions(db: Queryable, sql: string, params: unknown[], name: RegExp): Promise<string[]> {
  return (await plannedScans(db, sql, params, name)).map((s) => s.by);
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

/** SQL of a trace id, and of a span id, made of numbers (SQL expressions) */
export const traceIdSql = (t: string | number) => `substring(sha256(('trace ' || ${t})::bytea) FOR 16)`;
export const spanIdSql = (t: string | number, k: string | number) =>
  `substring(sha256(('span ' || ${t} || ' ' || ${k})::bytea) FOR 8)`;

/**
 * Spans of ~1.5 KB, a few to a page, `perTrace` in each of `traces` traces (run `run N` for
 * trace N): a tenant of hundreds of pages, too large to read per request.
 */
export async function insertSpans(db: Queryable, tenant: string, traces: number, perTrace: number): Promise<void> {
  await db.query(
    `INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, name, kind, start_ns, end_ns, status_code,
                                       attributes, events, links, resource, run_id)
     SELECT $1, ${traceIdSql('a.t')}, ${spanIdSql('a.t', 'b.k')}, 'chat', 1, 1, 1000 + a.t * 10 + b.k, 0,
            jsonb_build_object('text', repeat('x', 1500)), '[]', '[]', '{}', 'run ' || a.t
       FROM generate_series(1, $2::int) AS a(t) CROSS JOIN generate_series(1, $3::int) AS b(k)`,
    [tenant, traces, perTrace],
  );
}

/** `db`, recording the first parameters of each statement its queries and transactions run. */
export function recordingStatements(db: Database, seen: Map<string, readonly unknown[]>): Database {
  const wrap = (q: Queryable): Queryable => ({
    query: (sql, params, options) => {
      if (!seen.has(sql)) seen.set(sql, params ?? []);
      return q.query(sql, params, options);
    },
    exec: (sql) => q.exec(sql),
    copyRows: q.copyRows ? (t, c, r) => q.copyRows!(t, c, r) : undefined,
    copyTuples: q.copyTuples ? (t, c, r) => q.copyTuples!(t, c, r) : undefined,
  });
  return Object.assign(Object.create(db), wrap(db), {
    transaction: (fn: (tx: Queryable) => Promise<unknown>, o?: { untimed?: boolean }) =>
      db.transaction((tx) => fn(wrap(tx)), o),
  }) as Database;
}

/** The store's tables that grow with what is sent, whose statistics lag. */
export const STORE_TABLES = ['spans', 'steps', 'messages', 'logs'].map((name) => `tapedeck_store.${name}`);

/**
 * The statements of `seen` whose plans, under lagging statistics of STORE_TABLES, scan one of
 * the store's tables other than by a key (a condition matching `byKey`), each as
 * `relation by condition: sql`. An empty partition (the coming days', made ahead) is no
 * offence: it holds nothing to read; an empty table is, as it will grow.
 */
export async function scansNotByKey(
  db: Queryable,
  seen: ReadonlyMap<string, readonly unknown[]>,
  byKey: RegExp,
): Promise<string[]> {
  const empty = new Set(
    (
      await db.query<{ name: string }>(
        `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'tapedeck_store' AND c.relispartition AND pg_relation_size(c.oid) = 0`,
      )
    ).map((r) => r.name),
  );
  const offending: string[] = [];
  await withLaggingStatistics(db, STORE_TABLES, async () => {
    for (const [sql, params] of seen) {
      if (!/^\s*(SELECT|WITH|UPDATE|DELETE|INSERT)/i.test(sql)) continue;
      const scans = await plannedScans(db, sql, [...params], /^(spans|steps|messages|logs|payloads)/);
      for (const { relation, by } of scans) {
        if (empty.has(relation) || byKey.test(by)) continue;
        offending.push(`${relation} by ${by || 'every row'}: ${sql.replace(/\s+/g, ' ').slice(0, 160)}`);
      }
    }
  });
  return offending;
}
