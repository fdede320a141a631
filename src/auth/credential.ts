/**
 * @module auth/credential
 * Who may call tapedeck: credentials, their roles and tenants, and the TAPEDECK_TOKENS
 * format (docs/security.md). A credential is a name, a role and optionally a tenant; its
 * secret is only ever held as a SHA-256 digest once it has been read.
 *
 * Roles are ordered: `ro` reads (and replays: a replay changes nothing stored), `rw` also
 * ingests and erases within its tenant, `admin` also mints credentials and acts on every
 * tenant. A credential bound to a tenant reads and writes only that tenant's data; one that
 * is not bound works on the default tenant (`DEFAULT_TENANT`), except an admin, which may
 * name any tenant.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

export type Role = 'ro' | 'rw' | 'admin';
export const ROLES: readonly Role[] = ['ro', 'rw', 'admin'];

/**
 * The default tenant: what an open server, an unbound credential and every tapedeck before
 * tenancy stored. Stored as the empty name; the public SQL views show it as NULL.
 */
export const DEFAULT_TENANT = '';

export interface Credential {
  /** how the credential is named in logs and the audit log; never the secret */
  name: string;
  role: Role;
  /** null: not bound to a tenant */
  tenant: string | null;
  /** configured: TAPEDECK_TOKENS or its file; minted: POST /v1/credentials (id is its row) */
  source: 'configured' | 'minted';
  /** minted credentials' id (cr_<hex>); null for configured ones */
  id: string | null;
}

/** Whether a credential of role `have` may do what needs `need`. */
export function roleAllows(have: Role, need: Role): boolean {
  return ROLES.indexOf(have) >= ROLES.indexOf(need);
}

/** SHA-256 of a secret: how secrets are compared and stored. */
export function secretDigest(secret: string): Buffer {
  return createHash('sha256').update(secret, 'utf8').digest();
}

/** Equal digests, compared in constant time. */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** A configured token: the credential and its secret's digest. */
export interface ConfiguredToken {
  credential: Credential;
  digest: Buffer;
}

export class TokenListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TokenListError';
  }
}

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
/** Tenant names: the same characters as credential names, so they sit in URLs and logs as they are. */
export const TENANT_NAME = /^[A-Za-z0-9._-]{1,128}$/;
/** Shorter secrets are refused: a guessable token is no credential. */
export const MIN_SECRET_LENGTH = 16;

/**
 * Parses `name:secret:role[:tenant]` entries, separated by commas (TAPEDECK_TOKENS) or by
 * lines (TAPEDECK_TOKENS_FILE, where blank lines and lines starting with # are skipped).
 * An error names the entry by position and name, never by its secret.
 */
export function parseTokenEntries(text: string, where: string): ConfiguredToken[] {
  const entries = text
    .split(/[,\n]/)
    .map((e) => e.trim())
    .filter((e) => e !== '' && !e.startsWith('#'));
  const names = new Set<string>();
  const digests = new Set<string>();
  return entries.map((entry, i) => {
    const parts = entry.split(':');
    const name = parts[0] ?? '';
    const at = `${where}: entry ${i + 1}${NAME.test(name) ? ` (${name})` : ''}`;
    if (parts.length < 3 || parts.length > 4)
      throw new TokenListError(`${at}: expected name:secret:role or name:secret:role:tenant`);
    const [, secret, role, tenant] = parts;
    if (!NAME.test(name)) throw new TokenListError(`${at}: a name is 1 to 64 of A-Z a-z 0-9 . _ -`);
    if (secret.length < MIN_SECRET_LENGTH)
      throw new TokenListError(`${at}: the secret must be at least ${MIN_SECRET_LENGTH} characters`);
    if (!(ROLES as readonly string[]).includes(role))
      throw new TokenListError(`${at}: role must be ro, rw or admin, not ${JSON.stringify(role)}`);
    if (tenant !== undefined && !TENANT_NAME.test(tenant))
      throw new TokenListError(`${at}: a tenant is 1 to 128 of A-Z a-z 0-9 . _ -`);
    if (names.has(name)) throw new TokenListError(`${at}: the name ${name} is used twice`);
    const digest = secretDigest(secret);
    if (digests.has(digest.toString('hex'))) throw new TokenListError(`${at}: the same secret is used twice`);
    names.add(name);
    digests.add(digest.toString('hex'));
    return {
      credential: { name, role: role as Role, tenant: tenant ?? null, source: 'configured', id: null },
      digest,
    };
  });
}
