/**
 * @module auth/route-auth
 * Every route declares its auth decision where it is defined, as a guard placed before its
 * handler: `app.get('/v1/tapes/:run', allow.read, handler)`. One middleware, installed
 * first in the application (api/app.ts), finds the guard of the route a request matched and
 * enforces it before anything else of the route runs:
 *
 * - `public`: no credential (health and readiness probes);
 * - `read`: any valid credential (ro, rw, admin), `Authorization: Bearer`;
 * - `replay`: the same, and `x-api-key` is accepted too (the Anthropic SDK sends it);
 * - `write`: rw or admin (ingest, erasures);
 * - `admin`: admin only (credentials).
 *
 * No valid credential: 401 `unauthorized`; a credential whose role is short of the route's:
 * 403 `forbidden`. A route with no guard is treated as `read`, and the route-table test
 * (test/integration/auth-route-table.test.ts) fails for it: docs/security.md explains how to
 * give a new route its decision. On an open server (no credentials at all) every request is
 * an operator and no credential is looked at.
 *
 * Then the request's access (auth/access.ts) is set: its credential, and the tenant its reads
 * and writes are confined to (`?tenant=` names another, for operators only).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.js';
import { type Access, accessFor, OPEN_ACCESS, setAccess, withNamedTenant } from './access.js';
import { type Role, roleAllows } from './credential.js';
import type { Credentials } from './credentials.js';

export type AuthDecision =
  | { access: 'public' }
  | {
      access: 'credential';
      /** the least role that may use the route */
      role: Role;
      /** x-api-key is accepted besides Authorization: Bearer (routes under /v1/replays only) */
      apiKey: boolean;
    };

interface Guarded {
  decision: AuthDecision;
  /** runs before a refusal is thrown, so a route can choose how its errors are rendered (OTLP) */
  prepare?: (c: Context) => void;
  /** the route checks its own body's media type (OTLP takes protobuf too); else POSTs must be JSON */
  ownMediaTypes?: boolean;
}

const guards = new WeakMap<object, Guarded>();

/** A guard: a middleware that does nothing itself but names its route's decision. */
export function guard(
  decision: AuthDecision,
  options: { prepare?: (c: Context) => void; ownMediaTypes?: boolean } = {},
): MiddlewareHandler {
  const g: MiddlewareHandler = async (_c, next) => {
    await next();
  };
  guards.set(g, { decision, ...options });
  return g;
}

/** The decision a handler names, when it is a guard. */
export function decisionOf(handler: unknown): AuthDecision | undefined {
  return typeof handler === 'function' ? guards.get(handler)?.decision : undefined;
}

export const allow = {
  public: guard({ access: 'public' }),
  read: guard({ access: 'credential', role: 'ro', apiKey: false }),
  replay: guard({ access: 'credential', role: 'ro', apiKey: true }),
  write: guard({ access: 'credential', role: 'rw', apiKey: false }),
  admin: guard({ access: 'credential', role: 'admin', apiKey: false }),
} as const;

/** What a route with no guard is held to, besides failing the route-table test. */
const UNDECIDED: AuthDecision = { access: 'credential', role: 'ro', apiKey: false };

/** The guard of the route this request matched (the last guard among its handlers). */
function matchedGuard(c: Context): Guarded {
  let found: Guarded | undefined;
  for (const route of c.req.matchedRoutes) found = guards.get(route.handler) ?? found;
  return found ?? { decision: UNDECIDED };
}

export interface AuthenticateSettings {
  /** host names requests may name in Host and Origin besides the loopback names; '*': any */
  allowedHosts: readonly string[] | '*';
}

/**
 * The middleware enforcing each route's decision and setting the request's access. Before the
 * credential, the Host (and Origin, when sent) must name an allowed host, so a web page that
 * rebinds its DNS name to this address cannot read through a visitor's browser; after it, a
 * POST must say application/json, which a page can only send with the server's consent
 * (a CORS preflight tapedeck never grants).
 */
export function authenticate(
  credentials: Credentials | null,
  settings: AuthenticateSettings = { allowedHosts: [] },
): MiddlewareHandler {
  const hostAllowed = hostCheck(settings.allowedHosts);
  return async (c, next) => {
    const { decision, prepare, ownMediaTypes } = matchedGuard(c);
    if (decision.access === 'public') return next();
    const refuse = (error: ApiError): never => {
      prepare?.(c);
      throw error;
    };
    for (const [header, host] of [
      ['Host', hostOfHeader(c.req.header('host'))],
      ['Origin', originHost(c.req.header('origin'))],
    ] as const) {
      if (host !== undefined && !hostAllowed(host))
        refuse(
          new ApiError(
            'forbidden',
            `${header} ${JSON.stringify(host)} is not an allowed host name (--allowed-hosts, TAPEDECK_ALLOWED_HOSTS)`,
          ),
        );
    }
    let access: Access;
    try {
      const secret = credentials?.open === false ? secretOf(c, decision.apiKey) : null;
      access = await accessForSecret(credentials, secret, decision, `${c.req.method} ${c.req.path}`);
      access = withNamedTenant(access, c.req.query('tenant'));
    } catch (error) {
      if (error instanceof ApiError && error.type === 'unauthorized') c.header('www-authenticate', 'Bearer');
      return refuse(error as ApiError);
    }
    if ((c.req.method === 'POST' || c.req.method === 'PATCH' || c.req.method === 'PUT') && !ownMediaTypes) {
      const media = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
      if (media !== 'application/json')
        refuse(
          new ApiError(
            'unsupported_media_type',
            `${c.req.method} ${c.req.path} takes Content-Type: application/json, not ${JSON.stringify(media || '(none)')}`,
          ),
        );
    }
    setAccess(c, access);
    return next();
  };
}

/** Names that always reach this machine only; a rebound DNS name never looks like these. */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '::1'];

function hostCheck(allowed: readonly string[] | '*'): (host: string) => boolean {
  if (allowed === '*') return () => true;
  const names = new Set([...LOOPBACK_HOSTS, ...allowed].map((h) => h.toLowerCase()));
  return (host) => names.has(host) || host.endsWith('.localhost');
}

/** The host name of a Host header, lower-case, without port or IPv6 brackets. */
function hostOfHeader(value: string | undefined): string | undefined {
  if (value === undefined || value === '') return undefined;
  try {
    return new URL(`http://${value}`).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return value.toLowerCase();
  }
}

function originHost(value: string | undefined): string | undefined {
  if (value === undefined || value === '' || value === 'null') return value === 'null' ? 'null' : undefined;
  try {
    return new URL(value).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return value.toLowerCase();
  }
}

/**
 * The access a presented secret grants for a route's decision: 401 `unauthorized` without a
 * valid one, 403 `forbidden` when its role is short. An open server grants every request the
 * operator's access. Shared by the HTTP routes and the gRPC services.
 */
export async function accessForSecret(
  credentials: Credentials | null,
  secret: string | null,
  decision: Exclude<AuthDecision, { access: 'public' }>,
  what: string,
): Promise<Access> {
  if (!credentials || credentials.open) return OPEN_ACCESS;
  if (secret === null) throw new ApiError('unauthorized', missingMessage(decision.apiKey));
  const credential = await credentials.authenticate(secret);
  if (!credential) throw new ApiError('unauthorized', 'the credential is not valid (unknown, or revoked)');
  if (!roleAllows(credential.role, decision.role))
    throw new ApiError(
      'forbidden',
      `credential ${credential.name} is ${credential.role}; ${what} needs ${decision.role}`,
    );
  return accessFor(credential);
}

/** The secret of an `Authorization: Bearer <secret>` value; null when absent or another scheme. */
export function bearerSecret(authorization: string | undefined): string | null {
  if (authorization === undefined) return null;
  const match = /^bearer\s+(\S+)\s*$/i.exec(authorization);
  return match ? match[1] : null;
}

function missingMessage(apiKey: boolean): string {
  return apiKey
    ? 'a credential is required: Authorization: Bearer <token> or x-api-key: <token>'
    : 'a credential is required: Authorization: Bearer <token>';
}

/** The secret a request presents: Bearer first, then x-api-key where the route accepts it. */
function secretOf(c: Context, apiKey: boolean): string | null {
  const authorization = c.req.header('authorization');
  if (authorization !== undefined) return bearerSecret(authorization);
  if (apiKey) {
    const key = c.req.header('x-api-key')?.trim();
    if (key) return key;
  }
  return null;
}
