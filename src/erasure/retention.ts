/**
 * @module erasure/retention
 * Retention by age (--retention, per-tenant --retention-tenants; docs/security.md
 * "Retention"): spans that ended longer ago than their tenant's bound are deleted with what
 * derives from them, continuously, while ingest goes on.
 *
 * Each pass first drops the day partitions of spans and log records (partitions.ts) that
 * hold only rows past their tenants' bounds, erasing what derives from their spans; then it
 * walks every tenant's remaining expired spans oldest first, in batches of at most
 * `batchSpans` spans, each batch one short transaction (erase-rows.ts), so no lock is held
 * longer than one batch takes and ingest interleaves with it. Recall's index rows that held a
 * deleted step are swept after the batches, a few hundred rows per transaction. Each pass
 * that deletes anything is recorded as an erasure of scope "retention" per tenant (its
 * receipt counts what went, its payloads are purged by purge.ts) and logged with its counts.
 */
import { randomBytes } from 'node:crypto';
import { recordAudit } from '../auth/audit.js';
import type { Logger } from '../logger.js';
import type { Database, Queryable } from '../store/database.js';
import { chooseSpans, type DeletedCounts, eraseChosen, prepareErasure } from './erase-rows.js';
import type { Receipt } from './erasures.js';
import {
  claimDetached,
  dayStart,
  detachedPartitions,
  detachPartition,
  ensurePartitions,
  PARTITIONED_TABLES,
  type Partition,
  rangePartitions,
  tenantsIn,
} from './partitions.js';

export interface RetentionSettings {
  /** the default bound, in milliseconds; null keeps spans of tenants without an override */
  defaultMs: number | null;
  /** per tenant ('' is no tenant): a bound in milliseconds, or null to keep everything */
  tenantsMs: ReadonlyMap<string, number | null>;
  /** spans deleted per transaction */
  batchSpans: number;
  /** between passes */
  intervalMs: number;
}

export const DEFAULT_BATCH_SPANS = 1_000;
export const DEFAULT_INTERVAL_MS = 60_000;

export interface RetentionPass {
  tenant: string;
  /** spans that ended before this (Unix nanoseconds) were deleted */
  beforeNs: bigint;
  erasure: string;
  receipt: Receipt;
  /** transactions that deleted something (a dropped partition is one) */
  batches: number;
  /** the partitions dropped that held the tenant's rows */
  partitions: string[];
}

const DAY_MS = 86_400_000;

/**
 * Spans and log records before this are deleted for a tenant with this bound. A bound of a
 * day or more goes by whole UTC days, the partitions' (partitions.ts): the rows of a day go
 * once the whole day is past the bound, at most a day later than the bound alone says, and
 * then mostly by dropping the day's partitions rather than row by row.
 */
export function retentionCutoff(nowNs: bigint, boundMs: number): bigint {
  const cutoff = nowNs - BigInt(boundMs) * 1_000_000n;
  return boundMs >= DAY_MS ? dayStart(cutoff) : cutoff;
}

/**
 * Whether retention keeps day partitions: every tenant has a bound of a day or more, so each
 * day's partitions go whole once past it. Otherwise a day holding a tenant kept whole would
 * stay, and the partitions would pile up, one a day, while every read and write of a span by
 * its key probes each of them (docs/architecture.md, "Database adapters"); a bound under a
 * day deletes row by row at the exact bound, which partitions do not speed up.
 */
export function keepsDayPartitions(settings: Pick<RetentionSettings, 'defaultMs' | 'tenantsMs'>): boolean {
  const dayOrMore = (ms: number | null) => ms !== null && ms >= DAY_MS;
  return dayOrMore(settings.defaultMs) && [...settings.tenantsMs.values()].every(dayOrMore);
}

/** One pass over every tenant with a bound; returns what each tenant's pass deleted. */
export async function applyRetention(
  db: Database,
  settings: RetentionSettings,
  nowNs: bigint,
  signal?: AbortSignal,
  logger?: Logger,
): Promise<RetentionPass[]> {
  const cutoffOf = (tenant: string): bigint | null => {
    const boundMs = settings.tenantsMs.has(tenant) ? settings.tenantsMs.get(tenant)! : settings.defaultMs;
    return boundMs === null ? null : retentionCutoff(nowNs, boundMs);
  };
  const passes = new Map<string, RetentionPass>();
  const passOf = (tenant: string): RetentionPass => {
    let pass = passes.get(tenant);
    if (!pass) {
      const receipt: Receipt = { spans: 0, steps: 0, log_records: 0, payloads: 0, recall_index_rows: 0, runs: 0 };
      pass = { tenant, beforeNs: cutoffOf(tenant)!, erasure: newErasureId(), receipt, batches: 0, partitions: [] };
      passes.set(tenant, pass);
    }
    return pass;
  };
  if (keepsDayPartitions(settings)) {
    try {
      await ensurePartitions(db, nowNs);
    } catch (error) {
      logger?.warn({ err: error }, "could not make the coming days' partitions; trying again next pass");
    }
  }
  await dropExpiredPartitions(db, settings, nowNs, cutoffOf, passOf, signal, logger);
  for (const tenant of await storedTenants(db)) {
    if (cutoffOf(tenant) === null || signal?.aborted) continue;
    await retainTenant(db, settings, passOf(tenant), signal);
  }
  const done: RetentionPass[] = [];
  for (const pass of passes.values()) {
    if (pass.batches === 0) continue;
    await db.query('UPDATE tapedeck_store.erasures SET receipt = $2::jsonb WHERE id = $1', [
      pass.erasure,
      JSON.stringify(pass.receipt),
    ]);
    done.push(pass);
    if (logger) {
      await recordAudit(db, logger, {
        action: 'retention.run',
        actor: 'system',
        tenant: pass.tenant,
        subject: { erasure: pass.erasure, before_ns: pass.beforeNs.toString() },
        detail: { ...pass.receipt, batches: pass.batches, partitions: pass.partitions },
      });
    }
  }
  return done;
}

function newErasureId(): string {
  return `er_${randomBytes(16).toString('hex')}`;
}

/**
 * Drops each partition whose every row is past its tenant's bound, log records' first. A
 * partition is first detached from its table, in a transaction of its own that holds the
 * table's lock only for that: from then on no read sees its rows and no new row lands in it
 * (a late one of its day goes to the default partition). Then what derives from its spans
 * (steps, payload references, the log records no remaining span claims, runs) is erased in
 * batches, counted per tenant, and the partition is dropped. A partition detached by a pass
 * that stopped before dropping it is finished by the next. A partition holding rows of a
 * tenant not yet past its bound (or kept whole) stays: the row pass deletes the other
 * tenants' rows from it.
 */
async function dropExpiredPartitions(
  db: Database,
  settings: RetentionSettings,
  nowNs: bigint,
  cutoffOf: (tenant: string) => bigint | null,
  passOf: (tenant: string) => RetentionPass,
  signal: AbortSignal | undefined,
  logger: Logger | undefined,
): Promise<void> {
  const bounds = [settings.defaultMs, ...settings.tenantsMs.values()].filter((ms): ms is number => ms !== null);
  if (bounds.length === 0) return;
  const latest = retentionCutoff(nowNs, Math.min(...bounds));
  const emptyCutoff = settings.defaultMs === null ? null : retentionCutoff(nowNs, settings.defaultMs);
  const droppable = (partition: Partition, tenants: readonly string[]) =>
    tenants.length === 0
      ? emptyCutoff !== null && partition.to! <= emptyCutoff
      : tenants.every((t) => {
          const cutoff = cutoffOf(t);
          return cutoff !== null && partition.to! <= cutoff;
        });
  for (const of of [...PARTITIONED_TABLES].reverse()) {
    for (const partition of await rangePartitions(db, of)) {
      if (signal?.aborted || partition.to === null || partition.to > latest) break;
      if (!droppable(partition, await tenantsIn(db, partition.name))) continue;
      await detachPartition(db, of, partition, (tenants) => droppable(partition, tenants)).catch((error: unknown) =>
        logger?.warn({ err: error, partition: partition.name }, 'could not detach a partition; trying again next pass'),
      );
    }
    for (const detached of await detachedPartitions(db, of)) {
      if (signal?.aborted) break;
      const cutoff = (tenant: string) => cutoffOf(tenant) ?? dayStart(nowNs);
      if (of.table === 'spans') {
        if (!(await eraseDetachedSpans(db, settings, detached, cutoff, passOf, signal)) || signal?.aborted) continue;
        await db.transaction(async (tx) => {
          if (await claimDetached(tx, detached)) await tx.exec(`DROP TABLE tapedeck_store.${detached}`);
        });
      } else {
        await countDetachedLogs(db, detached, cutoff, passOf);
      }
    }
  }
}

/**
 * Erases what derives from a detached partition's spans, tenant by tenant, in batches;
 * resolves false when another process has the partition.
 */
async function eraseDetachedSpans(
  db: Database,
  settings: RetentionSettings,
  detached: string,
  cutoffOf: (tenant: string) => bigint,
  passOf: (tenant: string) => RetentionPass,
  signal: AbortSignal | undefined,
): Promise<boolean> {
  let claimed = true;
  for (const tenant of await tenantsIn(db, detached)) {
    const pass = passOf(tenant);
    pass.beforeNs = cutoffOf(tenant);
    pass.partitions.push(detached);
    let after: { trace_id: Uint8Array; span_id: Uint8Array } | null = {
      trace_id: new Uint8Array(),
      span_id: new Uint8Array(),
    };
    while (after && claimed && !signal?.aborted) {
      const from: { trace_id: Uint8Array; span_id: Uint8Array } = after;
      after = await db.transaction(async (tx) => {
        claimed = await claimDetached(tx, detached);
        if (!claimed) return null;
        await prepareErasure(tx);
        const [last] = await tx.query<{ trace_id: Uint8Array | null; span_id: Uint8Array | null }>(
          `WITH batch AS (
             SELECT tenant, trace_id, span_id, run_id FROM tapedeck_store.${detached}
              WHERE tenant = $1 AND (trace_id, span_id) > ($2::bytea, $3::bytea)
              ORDER BY trace_id, span_id LIMIT ${Math.floor(settings.batchSpans)}),
           chosen AS (INSERT INTO erased_spans SELECT * FROM batch ON CONFLICT DO NOTHING RETURNING 1)
           SELECT b.trace_id, b.span_id FROM (SELECT count(*) FROM chosen) c, batch b
            ORDER BY b.trace_id DESC, b.span_id DESC LIMIT 1`,
          [tenant, from.trace_id, from.span_id],
        );
        if (!last) return null;
        const rows = await eraseChosen(tx, { spansGone: true });
        add(pass.receipt, rows.counts);
        pass.receipt.payloads += rows.unreferencedPayloads.length;
        await recordPass(
          tx,
          pass.erasure,
          tenant,
          pass.beforeNs,
          pass.receipt,
          pass.batches === 0,
          rows.unreferencedPayloads,
        );
        return { trace_id: last.trace_id!, span_id: last.span_id! };
      });
      if (after) pass.batches++;
    }
  }
  return claimed;
}

/** Counts a detached partition's log records per tenant, in their passes' receipts, and drops it. */
async function countDetachedLogs(
  db: Database,
  detached: string,
  cutoffOf: (tenant: string) => bigint,
  passOf: (tenant: string) => RetentionPass,
): Promise<void> {
  const counted = await db.transaction(async (tx) => {
    if (!(await claimDetached(tx, detached))) return [];
    const rows = await tx.query<{ tenant: string; n: number | bigint }>(
      `SELECT tenant, count(*) AS n FROM tapedeck_store.${detached} GROUP BY tenant`,
    );
    for (const row of rows) {
      const pass = passOf(row.tenant);
      const receipt = { ...pass.receipt, log_records: pass.receipt.log_records + Number(row.n) };
      await recordPass(tx, pass.erasure, row.tenant, cutoffOf(row.tenant), receipt, pass.batches === 0, []);
    }
    await tx.exec(`DROP TABLE tapedeck_store.${detached}`);
    return rows;
  });
  for (const row of counted) {
    const pass = passOf(row.tenant);
    pass.beforeNs = cutoffOf(row.tenant);
    pass.receipt.log_records += Number(row.n);
    pass.partitions.push(detached);
    pass.batches++;
  }
}

/** Deletes the tenant's spans and log records before its pass's bound, row by row, in batches. */
async function retainTenant(
  db: Database,
  settings: RetentionSettings,
  pass: RetentionPass,
  signal: AbortSignal | undefined,
): Promise<void> {
  const { tenant, beforeNs, receipt } = pass;
  const record = (tx: Queryable, payloads: readonly string[] = []) =>
    recordPass(tx, pass.erasure, tenant, beforeNs, receipt, pass.batches === 0, payloads);
  for (const resolved of [true, false]) {
    // Each partial index (0005, 0014) walks its own spans oldest first.
    const where = `s.tenant = $1 AND s.end_ns < $2 AND s.run_id IS ${resolved ? 'NOT NULL' : 'NULL'}`;
    for (let chosen = 1; chosen > 0 && !signal?.aborted; ) {
      chosen = await db.transaction(async (tx) => {
        await prepareErasure(tx);
        const n = await chooseSpans(tx, where, [tenant, beforeNs.toString()], settings.batchSpans);
        if (n === 0) return 0;
        const rows = await eraseChosen(tx);
        add(receipt, rows.counts);
        receipt.payloads += rows.unreferencedPayloads.length;
        await record(tx, rows.unreferencedPayloads);
        return n;
      });
      if (chosen > 0) pass.batches++;
    }
  }
  // Log records past the bound that no deleted span took with it (they arrived after it, or
  // name no span), oldest first, as many per transaction. A row's ctid is its partition's.
  for (let deleted = 1; deleted > 0 && !signal?.aborted; ) {
    deleted = await db.transaction(async (tx) => {
      const [row] = await tx.query<{ n: number | bigint }>(
        `WITH d AS (
           DELETE FROM tapedeck_store.logs WHERE (tableoid, ctid) IN (
             SELECT tableoid, ctid FROM tapedeck_store.logs WHERE tenant = $1 AND time_ns < $2::bigint ORDER BY time_ns LIMIT $3)
           RETURNING 1)
         SELECT count(*) AS n FROM d`,
        [tenant, beforeNs.toString(), settings.batchSpans],
      );
      const n = Number(row.n);
      if (n === 0) return 0;
      receipt.log_records += n;
      await record(tx);
      return n;
    });
    if (deleted > 0) pass.batches++;
  }
}

function add(receipt: Receipt, counts: Partial<DeletedCounts>): void {
  for (const key of Object.keys(counts) as (keyof DeletedCounts)[]) receipt[key] += counts[key] ?? 0;
}

async function recordPass(
  tx: Queryable,
  id: string,
  tenant: string,
  beforeNs: bigint,
  receipt: Receipt,
  first: boolean,
  payloads: readonly string[],
): Promise<void> {
  if (first) {
    await tx.query(
      `INSERT INTO tapedeck_store.erasures (id, tenant, scope, target, receipt, status)
       VALUES ($1, $2, 'retention', $3::jsonb, $4::jsonb, 'complete')`,
      [id, tenant, JSON.stringify({ tenant, before_ns: beforeNs.toString() }), JSON.stringify(receipt)],
    );
  } else {
    await tx.query('UPDATE tapedeck_store.erasures SET receipt = $2::jsonb WHERE id = $1', [
      id,
      JSON.stringify(receipt),
    ]);
  }
  if (payloads.length === 0) return;
  await tx.query(
    `INSERT INTO tapedeck_store.erasure_payloads (erasure_id, digest) SELECT $1, unnest($2::text[]) ON CONFLICT DO NOTHING`,
    [id, payloads],
  );
  await tx.query(
    `UPDATE tapedeck_store.erasures
        SET payloads_total = payloads_total + $2, status = 'purging', completed_at = NULL WHERE id = $1`,
    [id, payloads.length],
  );
}

/** Every tenant that has a span, without reading every span (a skip over the tenant index). */
async function storedTenants(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ tenant: string }>(
    `WITH RECURSIVE t AS (
       SELECT min(tenant) AS tenant FROM tapedeck_store.spans
       UNION ALL
       SELECT (SELECT min(s.tenant) FROM tapedeck_store.spans s WHERE s.tenant > t.tenant) FROM t WHERE t.tenant IS NOT NULL)
     SELECT tenant FROM t WHERE tenant IS NOT NULL`,
  );
  return rows.map((r) => r.tenant);
}

/** Runs passes every intervalMs until stopped, logging what each deleted. */
export class RetentionWorker {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly abort = new AbortController();

  constructor(
    private readonly db: Database,
    private readonly settings: RetentionSettings,
    private readonly logger: Logger,
    private readonly onPayloads: () => void,
    private readonly nowNs: () => bigint = () => BigInt(Date.now()) * 1_000_000n,
  ) {}

  start(): void {
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.abort.abort();
    clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.abort.signal.aborted) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => this.schedule(this.settings.intervalMs));
    }, delayMs);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    try {
      // Each tenant's pass is logged with its counts by its audit record.
      const passes = await applyRetention(this.db, this.settings, this.nowNs(), this.abort.signal, this.logger);
      if (passes.some((p) => p.receipt.payloads > 0)) this.onPayloads();
    } catch (error) {
      if (!this.abort.signal.aborted) this.logger.warn({ err: error }, 'retention pass failed; trying again next pass');
    }
  }
}
