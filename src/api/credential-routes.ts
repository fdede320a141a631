/**
 * @module api/credential-routes
 * Credentials minted at runtime, admin only (docs/security.md):
 * - `POST /v1/credentials` `{"name", "role": "ro"|"rw"|"admin", "tenant"?}`: 201
 *   `{"credential": {...}, "token": "tdk_..."}`. The token is shown this once; only its
 *   SHA-256 is stored. An open server has no admin, so it mints nothing (403).
 * - `GET /v1/credentials`: every minted credential, revoked ones included, without secrets.
 * - `DELETE /v1/credentials/{id}`: revokes it (200 with the credential; 404 when there is no
 *   live credential of that id). Configured tokens are revoked by removing them from
 *   TAPEDECK_TOKENS and restarting.
 * Minting and revoking are recorded in the audit log.
 */
import { Hono } from 'hono';
import { accessOf } from '../auth/access.js';
import { ROLES, type Role, TENANT_NAME } from '../auth/credential.js';
import type { Credentials } from '../auth/credentials.js';
import { allow } from '../auth/route-auth.js';
import { ApiError } from '../errors.js';
import { parseJsonObject } from '../http/json-body.js';
import { jsonResponse } from '../http/json-response.js';

const NAME = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_BODY_CHARS = 4096;

export function createCredentialRoutes(credentials: Credentials): Hono {
  const app = new Hono();

  app.post('/v1/credentials', allow.admin, async (c) => {
    const access = accessOf(c);
    if (!access.credential)
      throw new ApiError(
        'forbidden',
        'an open server mints no credentials: configure an admin token (TAPEDECK_TOKENS)',
      );
    const body = await jsonObject(c.req.raw);
    const { name, role, tenant } = body;
    if (typeof name !== 'string' || !NAME.test(name))
      throw new ApiError('bad_input', '"name" must be 1 to 64 of A-Z a-z 0-9 . _ -');
    if (typeof role !== 'string' || !(ROLES as readonly string[]).includes(role))
      throw new ApiError('bad_input', '"role" must be "ro", "rw" or "admin"');
    if (tenant !== undefined && tenant !== null && (typeof tenant !== 'string' || !TENANT_NAME.test(tenant)))
      throw new ApiError('bad_input', '"tenant" must be 1 to 128 of A-Z a-z 0-9 . _ -, or absent');
    const minted = await credentials.mint(
      { name, role: role as Role, tenant: (tenant as string | undefined) ?? null },
      access,
    );
    return jsonResponse(minted, 201, { 'cache-control': 'no-store' });
  });

  app.get('/v1/credentials', allow.admin, async () => jsonResponse({ credentials: await credentials.list() }));

  app.delete('/v1/credentials/:id', allow.admin, async (c) => {
    const id = c.req.param('id');
    const revoked = await credentials.revoke(id, accessOf(c));
    if (!revoked) throw new ApiError('not_found', `no live credential ${JSON.stringify(id)}`);
    return jsonResponse({ credential: revoked });
  });

  return app;
}

async function jsonObject(req: Request): Promise<Record<string, unknown>> {
  const text = await req.text();
  if (text.length > MAX_BODY_CHARS) throw new ApiError('too_large', `the body is over ${MAX_BODY_CHARS} characters`);
  return parseJsonObject(text);
}
