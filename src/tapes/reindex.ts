/**
 * @module tapes/reindex
 * Re-derives every step (and every span's own run facts) from the stored spans and log
 * records, after a normalizer change (B5). Spans are the source of truth; steps are an index.
 * Works trace by trace in batches, one transaction per batch, so it is safe to run while
 * tapedeck is receiving, can be interrupted and re-run, and converges to what ingest would
 * store today. A span that is no longer a step loses its step row. Spans imported from a
 * cassette (span-rows.ts IMPORTED_FROM_CASSETTE) keep their steps as imported. Recall's words
 * are written with the steps (their own text) and their messages (those without words yet).
 */
import type { Database, Queryable } from '../store/database.js';
import type { DeriveSpans } from './derived-span.js';
import { resolveRuns } from './resolve-runs.js';
import { settleRunParents } from './run-parents.js';
import { IMPORTED_FROM_CASSETTE, rowToSpanRecord, spanSelectList } from './span-rows.js';
import { deleteUnreferencedMessages } from './message-rows.js';
import { spanKey } from './span-tree.js';
import { lockTraces, readLogsFor, upsertSteps } from './trace-store.js';

/** Whether any stored step was derived by a normalizer older than `version` (reindex would redo it). */
export async function hasStepsOlderThan(db: Queryable, version: number): Promise<boolean> {
  const [row] = await db.query<{ older: boolean }>(
    'SELECT EXISTS (SELECT 1 FROM tapedeck_store.steps WHERE normalizer_version < $1) AS older',
    [version],
  );
  return row.older === true;
}

/** Why the stored steps need a reindex (a migration that changed what derive stores), if any. */
export async function reindexReasons(db: Queryable): Promise<string[]> {
  const rows = await db.query<{ reason: string }>('SELECT reason FROM tapedeck_store.reindex_needed ORDER BY reason');
  return rows.map((r) => r.reason);
}

export interface ReindexProgress {
  tracesDone: number;
  tracesTotal: number;
  spansDone: number;
  steps: number;
}

export interface ReindexOptions {
  /** traces per transaction */
  batchTraces?: number;
  onProgress?: (progress: ReindexProgress) => void;
}

export async function reindex(
  db: Database,
  derive: DeriveSpans,
  options: ReindexOptions = {},
): Promise<ReindexProgress> {
  const batchTraces = options.batchTraces ?? 200;
  const [{ n }] = await db.query<{ n: bigint }>(
    'SELECT count(*) AS n FROM (SELECT DISTINCT tenant, trace_id FROM tapedeck_store.spans) t',
  );
  const progress: ReindexProgress = { tracesDone: 0, tracesTotal: Number(n), spansDone: 0, steps: 0 };
  options.onProgress?.({ ...progress });
  let after: { tenant: string; traceId: Buffer } | null = null;
  for (;;) {
    const traces: { tenant: string; trace_id: Uint8Array }[] = await db.query(
      `SELECT DISTINCT tenant, trace_id FROM tapedeck_store.spans
        ${after ? 'WHERE (tenant, trace_id) > ($2, $3::bytea)' : ''}
        ORDER BY tenant, trace_id LIMIT $1`,
      after ? [batchTraces, after.tenant, after.traceId] : [batchTraces],
    );
    if (traces.length === 0) break;
    const byTenant = new Map<string, Buffer[]>();
    for (const t of traces) {
      const list = byTenant.get(t.tenant) ?? [];
      list.push(Buffer.from(t.trace_id));
      byTenant.set(t.tenant, list);
    }
    await db.transaction(async (tx) => {
      // Every tenant's traces at once: buckets taken in one ascending order, as ingest takes them.
      await lockTraces(
        tx,
        traces.map((t) => Buffer.from(t.trace_id).toString('hex')),
      );
      for (const [tenant, traceIds] of byTenant) {
        const spans = (
          await tx.query(
            `SELECT ${spanSelectList} FROM tapedeck_store.spans WHERE tenant = $1 AND trace_id = ANY($2::bytea[])`,
            [tenant, traceIds],
          )
        )
          .map(rowToSpanRecord)
          .filter((s) => !(IMPORTED_FROM_CASSETTE in s.attributes));
        const logs = await readLogsFor(tx, tenant, spans);
        const derived = await derive(spans, (s) => logs.get(spanKey(s.traceId, s.spanId)) ?? []);
        await tx.query(
          `UPDATE tapedeck_store.spans s SET own_run = u.own_run, own_parent_run = u.own_parent_run
             FROM unnest($2::bytea[], $3::bytea[], $4::text[], $5::text[]) AS u(trace_id, span_id, own_run, own_parent_run)
            WHERE s.tenant = $1 AND s.trace_id = u.trace_id AND s.span_id = u.span_id`,
          [
            tenant,
            spans.map((s) => Buffer.from(s.traceId, 'hex')),
            spans.map((s) => Buffer.from(s.spanId, 'hex')),
            derived.map((d) => d.ownRun),
            derived.map((d) => d.ownParentRun),
          ],
        );
        const notSteps = spans.filter((_, i) => !derived[i].step);
        if (notSteps.length > 0) {
          await tx.query(
            `DELETE FROM tapedeck_store.steps st USING unnest($2::bytea[], $3::bytea[]) AS u(trace_id, span_id)
              WHERE st.tenant = $1 AND st.trace_id = u.trace_id AND st.span_id = u.span_id`,
            [
              tenant,
              notSteps.map((s) => Buffer.from(s.traceId, 'hex')),
              notSteps.map((s) => Buffer.from(s.spanId, 'hex')),
            ],
          );
        }
        await upsertSteps(tx, tenant, derived);
        await resolveRuns(tx, tenant, traceIds);
        await settleRunParents(tx, tenant, traceIds);
        progress.spansDone += spans.length;
        progress.steps += derived.filter((d) => d.step).length;
      }
    });
    progress.tracesDone += traces.length;
    options.onProgress?.({ ...progress });
    const last = traces[traces.length - 1];
    after = { tenant: last.tenant, traceId: Buffer.from(last.trace_id) };
  }
  // Every trace stored when it started is derived anew; later ones were derived by this code,
  // unless a --derive off receiver stored them into traces already passed (docs/ingest.md says
  // to reindex after it stops).
  await deleteUnreferencedMessages(db);
  await db.query('DELETE FROM tapedeck_store.reindex_needed');
  return progress;
}
