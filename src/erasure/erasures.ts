/**
 * @module erasure/erasures
 * Recording an erasure and reading it back (docs/security.md "Erasure").
 *
 * One transaction chooses what the erasure covers, deletes it (erase-rows.ts) and records the
 * erasure with its receipt, so every read, the SQL views included, stops showing it at commit
 * and no reader has to remember to filter. What is left for after commit is the payload bytes
 * (payload files can be large and live outside the database): the erasure lists those no
 * remaining step references, and the purge (purge.ts) deletes them, its progress shown by
 * GET /v1/erasures/{id}. A payload named by the erasure itself goes within the transaction.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Access } from '../auth/access.js';
import { recordAudit } from '../auth/audit.js';
import { ApiError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { Database, Queryable } from '../store/database.js';
import { type ErasureNotice, storeNotice } from './erasure-feed.js';
import { wordsKeptWithout } from './kept-words.js';
import { chooseSpans, type DeletedCounts, eraseChosen, type ErasedRows, prepareErasure } from './erase-rows.js';
import type { ErasureTarget } from './target.js';

/**
 * Span attributes (or resource attributes) that name the end user a span acted for. The SQL
 * function tapedeck_store.end_users_of (migration 0019) reads the same keys.
 */
export const USER_ATTRIBUTES = [
  'enduser.id',
  'user.id',
  'langfuse.user.id',
  'traceloop.association.properties.user_id',
];

export interface Receipt extends DeletedCounts {
  payloads: number;
}

export interface ErasureRecord {
  id: string;
  seq: bigint;
  /** the credential's tenant; null: an unbound credential, every tenant */
  tenant: string | null;
  target: ErasureTarget;
  receipt: Receipt;
  rows: ErasedRows;
  /** payloads named by the erasure (deleted already) */
  namedPayloads: string[];
  /** what replays check against it (erasure-feed.ts), stored for the other replicas too */
  notice: ErasureNotice;
}

export interface ErasureView {
  id: string;
  scope: string;
  target: Record<string, unknown>;
  receipt: Receipt;
  status: 'purging' | 'complete';
  progress: { payloads_total: number; payloads_purged: number };
  created_at: string;
  completed_at: string | null;
}

/**
 * Erases what target covers within `tenant` (null: every tenant). Throws not_found when it
 * covers nothing stored, so a foreign tenant's run reads exactly like one that never existed.
 */
export async function recordErasure(
  db: Database,
  payloads: PayloadStore,
  tenant: string | null,
  target: ErasureTarget,
  audit: { access: Access; logger: Logger },
): Promise<ErasureRecord> {
  const id = `er_${randomBytes(16).toString('hex')}`;
  // Payload stores are read outside the transaction: the PostgreSQL backend queries the
  // database the transaction holds (on PGlite, its only connection).
  const named = target.scope === 'payload' ? target.payload : null;
  const namedHeld = named !== null && (await payloads.has(named));
  const keptWords = named === null ? undefined : await wordsKeptWithout(db, payloads, tenant, named);
  const record = await db.transaction(
    async (tx) => {
      await prepareErasure(tx);
      let wholeTenant: string | undefined;
      if (named !== null) {
        // A bound credential erases only a payload its own tenant's steps reference.
        const covered = (tenant === null && namedHeld) || (await referencedBy(tx, tenant, named));
        if (!covered) throw nothingStored(target);
        // Its steps stay, and read the reference as erased; their words in recall's index
        // came from its text, so they are indexed again.
        await tx.query(
          `INSERT INTO reindexed_steps (tenant, trace_id, span_id)
           SELECT tenant, trace_id, span_id FROM tapedeck_store.steps st
            WHERE (tapedeck_store.payload_ref_of(st.request) = $1 OR tapedeck_store.payload_ref_of(st.response) = $1)
              AND ($2::text IS NULL OR st.tenant = $2)`,
          [named, tenant],
        );
        await tx.query('DELETE FROM tapedeck_store.payloads WHERE digest = $1', [named]);
      } else {
        const [where, params] = spanFilter(target as SpanTarget, tenant);
        if ((await chooseSpans(tx, where, params)) === 0) throw nothingStored(target);
        if (target.scope === 'tenant') wholeTenant = target.tenant;
      }
      const rows = await eraseChosen(tx, { wholeTenant, keptWords });
      const total = rows.unreferencedPayloads.length;
      const receipt: Receipt = { ...rows.counts, payloads: (namedHeld ? 1 : 0) + total };
      const [row] = await tx.query<{ seq: bigint | string | number }>(
        `INSERT INTO tapedeck_store.erasures (id, tenant, scope, target, receipt, status, payloads_total, completed_at)
         VALUES ($1, $2, $3, $4::jsonb, $5::jsonb, $6, $7, CASE WHEN $7::int = 0 THEN now() END)
         RETURNING seq`,
        [
          id,
          tenant,
          target.scope,
          JSON.stringify(recordedTarget(target)),
          JSON.stringify(receipt),
          total === 0 ? 'complete' : 'purging',
          total,
        ],
      );
      if (total > 0) {
        await tx.query(
          'INSERT INTO tapedeck_store.erasure_payloads (erasure_id, digest) SELECT $1, unnest($2::text[])',
          [id, rows.unreferencedPayloads],
        );
      }
      const namedPayloads = named === null ? [] : [named];
      const notice: ErasureNotice = {
        id,
        seq: BigInt(row.seq),
        tenant: target.scope === 'tenant' ? target.tenant : undefined,
        runs: rows.runsGone,
        // a trace may hold other runs' spans too: only a trace erasure names traces
        traces: target.scope === 'trace_id' ? rows.traces : undefined,
        spans: rows.spans,
        payloads: [...namedPayloads, ...rows.unreferencedPayloads],
      };
      await storeNotice(tx, notice);
      await recordAudit(tx, audit.logger, {
        action: 'erasure.record',
        actor: audit.access,
        tenant,
        subject: { erasure: id, scope: target.scope, target: recordedTarget(target) },
        detail: { ...receipt },
      });
      return { id, seq: BigInt(row.seq), tenant, target, receipt, rows, namedPayloads, notice };
    },
    { untimed: true },
  );
  // Named: its bytes go before the erasure is answered, whoever else referenced them.
  if (named !== null) await payloads.delete(named);
  return record;
}

/**
 * The target as the erasure keeps it: an end user's id is personal data the erasure removes
 * everywhere else, so its record keeps only the id's SHA-256.
 */
function recordedTarget(target: ErasureTarget): Record<string, unknown> {
  if (target.scope !== 'user') return target.body;
  return { user_sha256: createHash('sha256').update(target.user).digest('hex') };
}

/** The erasure as GET /v1/erasures/{id} shows it; undefined when unknown or another tenant's. */
export async function readErasure(db: Queryable, id: string, tenant: string | null): Promise<ErasureView | undefined> {
  const [row] = await db.query<{
    id: string;
    scope: string;
    target: Record<string, unknown>;
    receipt: Receipt;
    status: 'purging' | 'complete';
    payloads_total: number;
    payloads_purged: number;
    created_at: Date;
    completed_at: Date | null;
  }>(
    `SELECT id, scope, target, receipt, status, payloads_total, payloads_purged, created_at, completed_at
       FROM tapedeck_store.erasures WHERE id = $1 AND ($2::text IS NULL OR tenant = $2)`,
    [id, tenant],
  );
  if (!row) return undefined;
  return {
    id: row.id,
    scope: row.scope,
    target: row.target,
    receipt: row.receipt,
    status: row.status,
    progress: { payloads_total: row.payloads_total, payloads_purged: row.payloads_purged },
    created_at: new Date(row.created_at).toISOString(),
    completed_at: row.completed_at === null ? null : new Date(row.completed_at).toISOString(),
  };
}

/** The WHERE (over tapedeck_store.spans s) choosing what a span-covering target erases. */
type SpanTarget = Exclude<ErasureTarget, { scope: 'payload' }>;

function spanFilter(target: SpanTarget, tenant: string | null): [string, unknown[]] {
  const params: unknown[] = [tenant];
  const inTenant = '($1::text IS NULL OR s.tenant = $1)';
  switch (target.scope) {
    case 'run':
      return [`${inTenant} AND s.run_id = $2`, [...params, target.run]];
    case 'trace_id':
      return [`${inTenant} AND s.trace_id = decode($2, 'hex')`, [...params, target.traceId]];
    case 'span':
      return [
        `${inTenant} AND s.trace_id = decode($2, 'hex') AND s.span_id = decode($3, 'hex')`,
        [...params, target.traceId, target.spanId],
      ];
    case 'tenant':
      return [`${inTenant} AND s.tenant = $2`, [...params, target.tenant]];
    case 'user': {
      // Every run a span names the user in, whole: the prompts that carry what the user said
      // sit in other spans of the run than the one naming them; and each span that names the
      // user without a run. The spans naming a user are found through spans_end_user_idx
      // (migration 0019), their runs' spans through spans_run_idx: nothing reads every span.
      const inU = '($1::text IS NULL OR u.tenant = $1)';
      const names = `tapedeck_store.end_users_of(u.attributes, u.resource) IS NOT NULL
         AND tapedeck_store.end_users_of(u.attributes, u.resource) @> ARRAY[$2::text]`;
      return [
        `${inTenant} AND (s.tenant, s.trace_id, s.span_id) IN (
           SELECT r.tenant, r.trace_id, r.span_id FROM tapedeck_store.spans r
            WHERE (r.tenant, r.run_id) IN (
              SELECT u.tenant, u.run_id FROM tapedeck_store.spans u WHERE ${inU} AND u.run_id IS NOT NULL AND ${names})
           UNION ALL
           SELECT u.tenant, u.trace_id, u.span_id FROM tapedeck_store.spans u WHERE ${inU} AND u.run_id IS NULL AND ${names})`,
        [...params, target.user],
      ];
    }
  }
}

/** Whether a step (of this tenant, or of any when null) references the payload. */
async function referencedBy(tx: Queryable, tenant: string | null, ref: string): Promise<boolean> {
  const rows = await tx.query(
    `SELECT 1 FROM tapedeck_store.steps st
      WHERE (tapedeck_store.payload_ref_of(st.request) = $1 OR tapedeck_store.payload_ref_of(st.response) = $1)
        AND ($2::text IS NULL OR st.tenant = $2) LIMIT 1`,
    [ref, tenant],
  );
  return rows.length > 0;
}

function nothingStored(target: ErasureTarget): ApiError {
  return new ApiError('not_found', `nothing stored matches ${JSON.stringify(target.body)}`);
}
