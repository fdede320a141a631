/**
 * @module erasure/retention
 * Retention by age (--retention, per-tenant --retention-tenants; docs/security.md
 * "Retention"): spans that ended longer ago than their tenant's bound are deleted with what
 * derives from them, continuously, while ingest goes on.
 *
 * Each pass walks every tenant's expired spans oldest first, in batches of at most
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
import { chooseSpans, type DeletedCounts, eraseChosen, prepareErasure, withoutJit } from './erase-rows.js';
import type { Receipt } from './erasures.js';

export interface RetentionSettings {
  /** the default bound, in milliseconds; null keeps spans of tenants without an override */
  defaultMs: number | null;
  /** per tenant ('' is no tenant): a bound in milliseconds, or null to keep everything */
  tenantsMs: ReadonlyMap<string, number | null>;
  /** spans deleted per transaction */
  batchSpans: number;
  /** recall index rows examined per transaction */
  sweepRows: number;
  /** between passes */
  intervalMs: number;
}

export const DEFAULT_BATCH_SPANS = 1_000;
export const DEFAULT_SWEEP_ROWS = 256;
export const DEFAULT_INTERVAL_MS = 60_000;

export interface RetentionPass {
  tenant: string;
  /** spans that ended before this (Unix nanoseconds) were deleted */
  beforeNs: bigint;
  erasure: string;
  receipt: Receipt;
  batches: number;
}

/** One pass over every tenant with a bound; returns what each tenant's pass deleted. */
export async function applyRetention(
  db: Database,
  settings: RetentionSettings,
  nowNs: bigint,
  signal?: AbortSignal,
  logger?: Logger,
): Promise<RetentionPass[]> {
  const passes: RetentionPass[] = [];
  for (const tenant of await storedTenants(db)) {
    const boundMs = settings.tenantsMs.has(tenant) ? settings.tenantsMs.get(tenant)! : settings.defaultMs;
    if (boundMs === null || signal?.aborted) continue;
    const pass = await retainTenant(db, settings, tenant, nowNs - BigInt(boundMs) * 1_000_000n, signal);
    if (!pass) continue;
    passes.push(pass);
    if (logger) {
      await recordAudit(db, logger, {
        action: 'retention.run',
        actor: 'system',
        tenant,
        subject: { erasure: pass.erasure, before_ns: pass.beforeNs.toString() },
        detail: { ...pass.receipt, batches: pass.batches },
      });
    }
  }
  return passes;
}

async function retainTenant(
  db: Database,
  settings: RetentionSettings,
  tenant: string,
  beforeNs: bigint,
  signal: AbortSignal | undefined,
): Promise<RetentionPass | null> {
  const id = `er_${randomBytes(16).toString('hex')}`;
  const receipt: Receipt = { spans: 0, steps: 0, log_records: 0, payloads: 0, recall_index_rows: 0, runs: 0 };
  let batches = 0;
  const record = (tx: Queryable, payloads: readonly string[] = []) =>
    recordPass(tx, id, tenant, beforeNs, receipt, batches === 0, payloads);
  for (const resolved of [true, false]) {
    // Each partial index (0005, 0014) walks its own spans oldest first.
    const where = `s.tenant = $1 AND s.end_ns < $2 AND s.run_id IS ${resolved ? 'NOT NULL' : 'NULL'}`;
    for (let chosen = 1; chosen > 0 && !signal?.aborted; ) {
      chosen = await db.transaction(async (tx) => {
        await prepareErasure(tx);
        const n = await chooseSpans(tx, where, [tenant, beforeNs.toString()], settings.batchSpans);
        if (n === 0) return 0;
        const rows = await eraseChosen(tx, { sweepRecall: false });
        add(receipt, rows.counts);
        receipt.payloads += rows.unreferencedPayloads.length;
        await record(tx, rows.unreferencedPayloads);
        return n;
      });
      if (chosen > 0) batches++;
    }
  }
  // Log records past the bound that no deleted span took with it (they arrived after it, or
  // name no span), oldest first, as many per transaction.
  for (let deleted = 1; deleted > 0 && !signal?.aborted; ) {
    deleted = await db.transaction(async (tx) => {
      const [row] = await tx.query<{ n: number | bigint }>(
        `WITH d AS (
           DELETE FROM tapedeck_store.logs WHERE ctid IN (
             SELECT ctid FROM tapedeck_store.logs WHERE tenant = $1 AND time_ns < $2::bigint ORDER BY time_ns LIMIT $3)
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
    if (deleted > 0) batches++;
  }
  if (batches === 0) return null;
  receipt.recall_index_rows += await sweepRecallRows(db, tenant, settings.sweepRows, signal);
  await db.query('UPDATE tapedeck_store.erasures SET receipt = $2::jsonb WHERE id = $1', [id, JSON.stringify(receipt)]);
  return { tenant, beforeNs, erasure: id, receipt, batches };
}

function add(receipt: Receipt, counts: DeletedCounts): void {
  for (const key of Object.keys(counts) as (keyof DeletedCounts)[]) receipt[key] += counts[key];
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

/**
 * Deletes the tenant's recall index rows that hold a step no longer stored, and records the
 * steps they held that still are in recall's backlog, to be indexed again; a few hundred
 * rows per transaction, in row order. Returns how many rows it deleted.
 */
export async function sweepRecallRows(
  db: Database,
  tenant: string,
  rowsPerBatch: number,
  signal?: AbortSignal,
): Promise<number> {
  let deleted = 0;
  for (let after: string | null = '0'; after !== null && !signal?.aborted; ) {
    const rows = await db.transaction(async (tx) => {
      await withoutJit(tx);
      return tx.query<{ last: string | null; n: number | bigint }>(
        `WITH batch AS (
         SELECT row_id, tenant, trace_ids, span_ids, steps FROM tapedeck_store.trace_words
          WHERE tenant = $1 AND row_id > $2::bigint ORDER BY row_id LIMIT $3),
       pairs AS (
         SELECT b.row_id, b.tenant, i,
                substring(b.trace_ids FROM i * 16 + 1 FOR 16) AS trace_id,
                substring(b.span_ids FROM i * 8 + 1 FOR 8) AS span_id,
                EXISTS (SELECT 1 FROM tapedeck_store.steps st
                         WHERE st.tenant = b.tenant AND st.trace_id = substring(b.trace_ids FROM i * 16 + 1 FOR 16)
                           AND st.span_id = substring(b.span_ids FROM i * 8 + 1 FOR 8)) AS stored
           FROM batch b CROSS JOIN generate_series(0, b.steps - 1) AS i),
       stale AS (SELECT DISTINCT row_id FROM pairs WHERE NOT stored),
       doomed AS (DELETE FROM tapedeck_store.trace_words w USING stale WHERE w.row_id = stale.row_id RETURNING w.row_id),
       requeued AS (
         INSERT INTO tapedeck_store.recall_backlog (tenant, trace_ids, span_ids, steps)
         SELECT p.tenant, string_agg(p.trace_id, ''::bytea ORDER BY p.i), string_agg(p.span_id, ''::bytea ORDER BY p.i), count(*)
           FROM pairs p JOIN stale USING (row_id) WHERE p.stored
          GROUP BY p.row_id, p.tenant)
       SELECT (SELECT max(row_id)::text FROM batch) AS last, (SELECT count(*) FROM doomed) AS n`,
        [tenant, after, rowsPerBatch],
      );
    });
    deleted += Number(rows[0].n);
    after = rows[0].last;
  }
  return deleted;
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
