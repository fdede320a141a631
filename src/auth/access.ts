/**
 * @module auth/access
 * A request's access: who is calling and which tenant's data it reads and writes. The
 * authentication middleware (auth/route-auth.ts) sets it once per request; handlers read it
 * with accessOf(c) and pass `tenant` to every store read and write, so a tenant-bound
 * credential never reaches another tenant's rows (a foreign id is simply not found: 404).
 *
 * - A tenant-bound credential: its tenant.
 * - An unbound ro or rw credential: the default tenant ('').
 * - An operator (an admin credential, or anyone on an open server): the credential's tenant
 *   or the default, unless the request names another with `?tenant=NAME`.
 */
import type { Context } from 'hono';
import { ApiError } from '../errors.js';
import { type Credential, DEFAULT_TENANT, TENANT_NAME } from './credential.js';

export interface Access {
  /** the credential that authenticated the request; null on an open server */
  credential: Credential | null;
  /** the tenant whose data this request reads and writes ('' is the default tenant) */
  tenant: string;
  /** may name any tenant and act on every one: an admin, or anyone on an open server */
  operator: boolean;
}

const ACCESS_KEY = 'tapedeck.access';

/** What an open server grants every request. */
export const OPEN_ACCESS: Access = Object.freeze({ credential: null, tenant: DEFAULT_TENANT, operator: true });

/** The access a credential grants, before a request names a tenant. */
export function accessFor(credential: Credential | null): Access {
  if (!credential) return OPEN_ACCESS;
  return {
    credential,
    tenant: credential.tenant ?? DEFAULT_TENANT,
    operator: credential.role === 'admin',
  };
}

/**
 * An operator's access narrowed to the tenant a request names (`?tenant=`); anyone else
 * naming a tenant other than their own is refused as not found, like a foreign id.
 */
export function withNamedTenant(access: Access, named: string | undefined): Access {
  if (named === undefined) return access;
  if (named !== '' && !TENANT_NAME.test(named))
    throw new ApiError('bad_input', 'tenant must be 1 to 128 of A-Z a-z 0-9 . _ - (empty: the default tenant)');
  if (named === access.tenant) return access;
  if (!access.operator) throw new ApiError('not_found', `no tenant ${JSON.stringify(named)} for this credential`);
  return { ...access, tenant: named };
}

export function setAccess(c: Context, access: Access): void {
  c.set(ACCESS_KEY as never, access as never);
}

/**
 * The request's access. Routes mounted without the application's authentication (unit
 * tests of one route group) see an open server.
 */
export function accessOf(c: Context): Access {
  return (c.get(ACCESS_KEY as never) as Access | undefined) ?? OPEN_ACCESS;
}

/** The tenant a request reads and writes (shorthand for accessOf(c).tenant). */
export function tenantOf(c: Context): string {
  return accessOf(c).tenant;
}
