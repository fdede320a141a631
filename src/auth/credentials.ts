/**
 * @module auth/credentials
 * Looking up a request's secret: configured tokens (TAPEDECK_TOKENS, TAPEDECK_TOKENS_FILE)
 * held in memory as digests, then credentials minted at runtime (tapedeck_store.credentials,
 * stored as digests too). Minting and revoking write an audit row in the same transaction.
 *
 * A server with no credential of either kind at start is open: every request is an operator
 * (docs/security.md, "The open-server rule"). Minting needs an admin, so an open server stays
 * open for its lifetime.
 *
 * A minted credential found in the database is remembered for CACHE_MS, so a busy sender
 * costs one lookup every few seconds rather than one per request; revoking here forgets it
 * at once, and another server sharing the database stops accepting it within CACHE_MS.
 */
import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { Database } from '../store/database.js';
import type { Access } from './access.js';
import { recordAudit } from './audit.js';
import { type ConfiguredToken, type Credential, type Role, sameDigest, secretDigest } from './credential.js';

export const CACHE_MS = 5_000;
/** Remembered lookups, found or not, at most: a flood of wrong secrets cannot grow memory. */
const CACHE_ENTRIES = 10_000;

export interface MintedCredential {
  id: string;
  name: string;
  role: Role;
  tenant: string | null;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
}

export interface Credentials {
  /** no credential of either kind: every request is an operator */
  readonly open: boolean;
  /** the credential a secret belongs to; undefined for an unknown or revoked one */
  authenticate(secret: string): Promise<Credential | undefined>;
  /** a new credential; its token is returned here once and never stored */
  mint(
    request: { name: string; role: Role; tenant: string | null },
    by: Access,
  ): Promise<{ credential: MintedCredential; token: string }>;
  /** revokes a minted credential; false when there is no such live credential */
  revoke(id: string, by: Access): Promise<MintedCredential | undefined>;
  list(): Promise<MintedCredential[]>;
}

export async function openCredentials(
  db: Database,
  configured: ConfiguredToken[],
  logger: Logger,
): Promise<Credentials> {
  const [{ n }] = await db.query<{ n: bigint | number | string }>(
    'SELECT count(*) AS n FROM tapedeck_store.credentials WHERE revoked_at IS NULL',
  );
  const open = configured.length === 0 && Number(n) === 0;
  const cache = new Map<string, { credential: Credential | undefined; until: number }>();

  async function lookupMinted(digest: Buffer): Promise<Credential | undefined> {
    const key = digest.toString('hex');
    const hit = cache.get(key);
    if (hit && hit.until > Date.now()) return hit.credential;
    const rows = await db.query<{ id: string; name: string; role: Role; tenant: string | null }>(
      `SELECT id, name, role, tenant FROM tapedeck_store.credentials
        WHERE secret_sha256 = $1 AND revoked_at IS NULL`,
      [digest],
    );
    const credential: Credential | undefined = rows[0]
      ? { name: rows[0].name, role: rows[0].role, tenant: rows[0].tenant, source: 'minted', id: rows[0].id }
      : undefined;
    if (cache.size >= CACHE_ENTRIES) cache.clear();
    cache.set(key, { credential, until: Date.now() + CACHE_MS });
    return credential;
  }

  return {
    open,
    async authenticate(secret) {
      if (open || secret === '') return undefined;
      const digest = secretDigest(secret);
      for (const token of configured) if (sameDigest(token.digest, digest)) return token.credential;
      return lookupMinted(digest);
    },
    async mint(request, by) {
      const id = `cr_${randomBytes(12).toString('hex')}`;
      const token = `tdk_${randomBytes(32).toString('base64url')}`;
      const createdBy = by.credential?.name ?? 'open';
      const credential = await db.transaction(async (tx) => {
        const [row] = await tx.query<Record<string, unknown>>(
          `INSERT INTO tapedeck_store.credentials (id, name, role, tenant, secret_sha256, created_by)
           VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${mintedColumns}`,
          [id, request.name, request.role, request.tenant, secretDigest(token), createdBy],
        );
        await recordAudit(tx, logger, {
          action: 'credential.mint',
          actor: by,
          tenant: request.tenant,
          subject: { credential: id, name: request.name, role: request.role },
        });
        return mintedOf(row);
      });
      return { credential, token };
    },
    async revoke(id, by) {
      const revoked = await db.transaction(async (tx) => {
        const rows = await tx.query<Record<string, unknown>>(
          `UPDATE tapedeck_store.credentials SET revoked_at = now(), revoked_by = $2
            WHERE id = $1 AND revoked_at IS NULL RETURNING ${mintedColumns}, secret_sha256`,
          [id, by.credential?.name ?? 'open'],
        );
        if (rows.length === 0) return undefined;
        await recordAudit(tx, logger, {
          action: 'credential.revoke',
          actor: by,
          tenant: (rows[0].tenant as string | null) ?? null,
          subject: { credential: id, name: rows[0].name },
        });
        return rows[0];
      });
      if (!revoked) return undefined;
      cache.delete(Buffer.from(revoked.secret_sha256 as Uint8Array).toString('hex'));
      return mintedOf(revoked);
    },
    async list() {
      const rows = await db.query<Record<string, unknown>>(
        `SELECT ${mintedColumns} FROM tapedeck_store.credentials ORDER BY created_at, id`,
      );
      return rows.map(mintedOf);
    },
  };
}

const mintedColumns = 'id, name, role, tenant, created_at, created_by, revoked_at';

function mintedOf(row: Record<string, unknown>): MintedCredential {
  const time = (v: unknown) => (v === null || v === undefined ? null : v instanceof Date ? v.toISOString() : String(v));
  return {
    id: row.id as string,
    name: row.name as string,
    role: row.role as Role,
    tenant: (row.tenant as string | null) ?? null,
    created_at: time(row.created_at) as string,
    created_by: row.created_by as string,
    revoked_at: time(row.revoked_at),
  };
}
