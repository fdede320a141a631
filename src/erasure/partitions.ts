/**
 * @module erasure/partitions
 * The time partitions of spans (by end_ns) and log records (by time_ns), migration 0017: one
 * per UTC day, made here a few days ahead, so the rows of a day sit together and retention
 * drops the day whole once every tenant holding rows in it is past its bound
 * (retention.ts). Rows of a day without a partition land in the default partition, from
 * which retention deletes them row by row; a day whose rows already sit there gets no
 * partition.
 *
 * They are made only where retention drops them (retention.ts, keepsDayPartitions):
 * otherwise, one a day, they would pile up, and each one costs every read and write of a span
 * by its key, which probes every partition since it cannot name the day.
 *
 * Making and detaching partitions take a short exclusive lock on the table (PostgreSQL's rule
 * for both), so each waits at most LOCK_TIMEOUT for ingest and reads to let go and is tried
 * again on the next pass when it cannot have it.
 */
import { randomBytes } from 'node:crypto';
import type { Database, Queryable } from '../store/database.js';

export const DAY_NS = 86_400_000_000_000n;
/** Days after today that have a partition before their first row arrives. */
export const DAYS_AHEAD = 3;
const LOCK_TIMEOUT = '5s';
/** An arbitrary constant: replicas make partitions one at a time. */
const PARTITION_LOCK_KEY = 7_467_100_016;
/** Another: replicas take turns claiming detached partitions. */
const CLAIM_LOCK_KEY = 7_467_100_017;
/** A claim not renewed for this long was a process that stopped: another takes over. */
const CLAIM_TTL_MS = 10 * 60_000;
/** This process, in its claims. */
const CLAIMANT = randomBytes(8).toString('hex');

/** A time-partitioned table and the column it is partitioned by. */
export interface PartitionedTable {
  table: 'spans' | 'logs';
  column: 'end_ns' | 'time_ns';
}

export const PARTITIONED_TABLES: readonly PartitionedTable[] = [
  { table: 'spans', column: 'end_ns' },
  { table: 'logs', column: 'time_ns' },
];

export interface Partition {
  /** the partition's table, in schema tapedeck_store */
  name: string;
  /** its rows' times are at least this (null: no lower bound) */
  from: bigint | null;
  /** and below this (null: no upper bound) */
  to: bigint | null;
}

/** The start of the UTC day holding `ns`. */
export function dayStart(ns: bigint): bigint {
  return ns - (((ns % DAY_NS) + DAY_NS) % DAY_NS);
}

/** The table's range partitions (not its default partition), oldest first. */
export async function rangePartitions(q: Queryable, of: PartitionedTable): Promise<Partition[]> {
  const rows = await q.query<{ name: string; bound: string }>(
    `SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound
       FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
      WHERE i.inhparent = $1::regclass`,
    [`tapedeck_store.${of.table}`],
  );
  const value = (text: string) => (/^'?-?\d+'?$/.test(text) ? BigInt(text.replaceAll("'", '')) : null);
  const partitions: Partition[] = [];
  for (const row of rows) {
    const range = /^FOR VALUES FROM \((.+)\) TO \((.+)\)$/.exec(row.bound);
    if (range) partitions.push({ name: row.name, from: value(range[1]), to: value(range[2]) });
  }
  return partitions.sort((a, b) => (a.to === null ? 1 : b.to === null ? -1 : a.to < b.to ? -1 : a.to > b.to ? 1 : 0));
}

/**
 * Time partitions past which a server whose retention keeps none says what they cost: a few
 * (a store partitioned on upgrade, the days an earlier version made ahead) cost little each.
 */
const KEPT_PARTITIONS_WARNED = 8;

/**
 * Where retention does not keep day partitions (earlier versions made them whatever the
 * retention): what the ones there cost and how to fold them, or null when they are few.
 */
export async function keptPartitionsWarning(q: Queryable): Promise<string | null> {
  const kept = (await rangePartitions(q, PARTITIONED_TABLES[0])).length;
  if (kept < KEPT_PARTITIONS_WARNED) return null;
  return (
    `tapedeck_store.spans has ${kept} time partitions that retention does not drop: ` +
    'every read and write of a span by its key probes each of them; docs/deploy.md ("Upgrading") folds them ' +
    'into the default partition'
  );
}

/** The name of the partition of the UTC day starting at `from`: spans_p20261203. */
export function partitionName(of: PartitionedTable, from: bigint): string {
  const date = new Date(Number(from / 1_000_000n)).toISOString().slice(0, 10).replaceAll('-', '');
  return `${of.table}_p${date}`;
}

/**
 * Makes the partitions of today and the DAYS_AHEAD days after it (by `nowNs`) that are
 * missing; returns the names it made.
 */
export async function ensurePartitions(db: Database, nowNs: bigint): Promise<string[]> {
  const made: string[] = [];
  for (const of of PARTITIONED_TABLES) {
    made.push(
      ...(await db.transaction(async (tx) => {
        await tx.query("SELECT set_config('lock_timeout', $1, true)", [LOCK_TIMEOUT]);
        await tx.query('SELECT pg_advisory_xact_lock($1)', [PARTITION_LOCK_KEY]);
        const existing = await rangePartitions(tx, of);
        const names: string[] = [];
        for (let from = dayStart(nowNs), days = 0; days <= DAYS_AHEAD; from += DAY_NS, days++) {
          const to = from + DAY_NS;
          if (existing.some((p) => (p.from === null || p.from < to) && (p.to === null || p.to > from))) continue;
          // A day with rows in the default partition keeps them there: the new partition
          // would have to take them, under the table's lock.
          const [taken] = await tx.query<{ taken: boolean }>(
            `SELECT EXISTS (SELECT 1 FROM tapedeck_store.${of.table}_default WHERE ${of.column} >= $1 AND ${of.column} < $2) AS taken`,
            [from.toString(), to.toString()],
          );
          if (taken.taken) continue;
          const name = partitionName(of, from);
          await tx.exec(
            `CREATE TABLE tapedeck_store.${name} PARTITION OF tapedeck_store.${of.table} FOR VALUES FROM (${from}) TO (${to});
             ${tenantPolicy(name)}`,
          );
          names.push(name);
        }
        return names;
      })),
    );
  }
  return made;
}

/** The tenants with rows in a partition, without reading each row (a skip over its key). */
export async function tenantsIn(q: Queryable, partition: string): Promise<string[]> {
  const table = `tapedeck_store.${partition}`;
  const rows = await q.query<{ tenant: string }>(
    `WITH RECURSIVE t AS (
       SELECT min(tenant) AS tenant FROM ${table}
       UNION ALL
       SELECT (SELECT min(p.tenant) FROM ${table} p WHERE p.tenant > t.tenant) FROM t WHERE t.tenant IS NOT NULL)
     SELECT tenant FROM t WHERE tenant IS NOT NULL`,
  );
  return rows.map((r) => r.tenant);
}

/** What a partition is named once detached, until retention drops it. */
function detachedName(of: PartitionedTable, partition: string): string {
  return `${of.table}_expired_${partition.slice(of.table.length + 1)}`;
}

/**
 * Detaches the partition when `droppable` holds for the tenants it holds, read under the
 * table's lock (no row can arrive between reading and detaching); returns whether it did.
 */
export async function detachPartition(
  db: Database,
  of: PartitionedTable,
  partition: Partition,
  droppable: (tenants: readonly string[]) => boolean,
): Promise<boolean> {
  const kept = new Error('kept');
  return db
    .transaction(async (tx) => {
      await tx.query("SELECT set_config('lock_timeout', $1, true)", [LOCK_TIMEOUT]);
      await tx.exec(`ALTER TABLE tapedeck_store.${of.table} DETACH PARTITION tapedeck_store.${partition.name}`);
      if (!droppable(await tenantsIn(tx, partition.name))) throw kept;
      await tx.exec(`ALTER TABLE tapedeck_store.${partition.name} RENAME TO ${detachedName(of, partition.name)}`);
      return true;
    })
    .catch((error: unknown) => {
      if (error === kept) return false;
      throw error;
    });
}

/** The table's partitions detached and not dropped yet. */
export async function detachedPartitions(q: Queryable, of: PartitionedTable): Promise<string[]> {
  const rows = await q.query<{ name: string }>(
    `SELECT relname AS name FROM pg_class
      WHERE relnamespace = 'tapedeck_store'::regnamespace AND relkind = 'r' AND starts_with(relname, $1)
      ORDER BY relname`,
    [detachedName(of, `${of.table}_`)],
  );
  return rows.map((r) => r.name);
}

/**
 * A partition is a table of its own, which a role granted every table of the schema could
 * read directly: it gets the table's tenant policy (0013) too.
 */
function tenantPolicy(name: string): string {
  return `ALTER TABLE tapedeck_store.${name} ENABLE ROW LEVEL SECURITY;
    CREATE POLICY tenant_rows ON tapedeck_store.${name}
      USING (tenant IS NOT DISTINCT FROM COALESCE(tapedeck_store.tenant_of_role(current_user), tenant));`;
}

/**
 * Within a transaction working on a detached partition: whether this process may (the
 * partition still exists, and no other process claimed it within CLAIM_TTL_MS), claiming or
 * renewing it if so, so several replicas running retention erase each partition once. The
 * claim is the partition's comment; replicas take turns reading and writing it.
 */
export async function claimDetached(tx: Queryable, name: string): Promise<boolean> {
  await tx.query('SELECT pg_advisory_xact_lock($1)', [CLAIM_LOCK_KEY]);
  const [row] = await tx.query<{ exists: boolean; claim: string | null }>(
    `SELECT to_regclass($1) IS NOT NULL AS exists, obj_description(to_regclass($1), 'pg_class') AS claim`,
    [`tapedeck_store.${name}`],
  );
  if (!row.exists) return false;
  const claim = row.claim ? (JSON.parse(row.claim) as { by: string; at: number }) : null;
  if (claim && claim.by !== CLAIMANT && Date.now() - claim.at < CLAIM_TTL_MS) return false;
  await tx.exec(`COMMENT ON TABLE tapedeck_store.${name} IS '${JSON.stringify({ by: CLAIMANT, at: Date.now() })}'`);
  return true;
}

/** Makes missing partitions every hour (serve, where retention keeps day partitions: keepsDayPartitions). */
export class PartitionWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> | undefined;

  constructor(
    private readonly db: Database,
    private readonly onError: (error: unknown) => void,
    private readonly intervalMs = 3_600_000,
  ) {}

  /** Resolves once the first pass is done, so spans of today never wait in the default partition. */
  start(): Promise<void> {
    const pass = () => {
      this.running = ensurePartitions(this.db, BigInt(Date.now()) * 1_000_000n).catch(this.onError);
      this.timer = setTimeout(pass, this.intervalMs);
      this.timer.unref();
    };
    pass();
    return this.running!.then(() => undefined);
  }

  async stop(): Promise<void> {
    clearTimeout(this.timer);
    await this.running;
  }
}
