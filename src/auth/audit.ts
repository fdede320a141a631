/**
 * @module auth/audit
 * The audit log: every use of a credential that changed something (minting and revoking
 * credentials, erasures, retention runs) is one row of tapedeck_store.audit_log (the
 * public view tapedeck.audit_log) and one structured log line (`audit: true`). Pass the
 * transaction of the change when there is one, so the record and the change commit
 * together; the log line is written once the row is.
 */
import type { Logger } from '../logger.js';
import type { Queryable } from '../store/database.js';
import type { Access } from './access.js';

export interface AuditEntry {
  /** what happened, `noun.verb`: credential.mint, credential.revoke, erasure.record, retention.run */
  action: string;
  /** who: the request's access, or 'system' for work tapedeck does on its own (retention) */
  actor: Access | 'system';
  /** the tenant acted on; null: every tenant, or none */
  tenant: string | null;
  /** what was acted on (ids, names: never secrets or stored content) */
  subject?: Record<string, unknown>;
  /** the outcome (counts, new ids) */
  detail?: Record<string, unknown>;
}

export interface AuditRecord {
  id: string;
  at: string;
}

/** Writes one audit row (in `q`, a transaction or the database) and logs it. */
export async function recordAudit(q: Queryable, logger: Logger, entry: AuditEntry): Promise<AuditRecord> {
  const who = actorOf(entry.actor);
  const subject = entry.subject ?? {};
  const detail = entry.detail ?? {};
  const [row] = await q.query<{ id: bigint | string; at: Date | string }>(
    `INSERT INTO tapedeck_store.audit_log (action, actor, actor_role, actor_tenant, tenant, subject, detail)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7::jsonb) RETURNING id, at`,
    [
      entry.action,
      who.actor,
      who.role,
      who.tenant,
      entry.tenant,
      JSON.stringify(subject, bigintAsString),
      JSON.stringify(detail, bigintAsString),
    ],
  );
  const record = { id: String(row.id), at: row.at instanceof Date ? row.at.toISOString() : String(row.at) };
  logger.info(
    {
      audit: true,
      auditId: record.id,
      action: entry.action,
      actor: who.actor,
      actorRole: who.role,
      actorTenant: who.tenant,
      tenant: entry.tenant,
      subject,
      detail,
    },
    `audit: ${entry.action} by ${who.actor}`,
  );
  return record;
}

function actorOf(actor: Access | 'system'): { actor: string; role: string | null; tenant: string | null } {
  if (actor === 'system') return { actor: 'system', role: null, tenant: null };
  if (!actor.credential) return { actor: 'open', role: null, tenant: null };
  return { actor: actor.credential.name, role: actor.credential.role, tenant: actor.credential.tenant };
}

function bigintAsString(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
