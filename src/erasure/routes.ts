/**
 * @module erasure/routes
 * `POST /v1/erasures` records an erasure and answers 202 with its id, receipt and status;
 * `GET /v1/erasures/{id}` shows it, with the background purge's progress
 * (docs/api.md, docs/security.md "Erasure").
 *
 * - 400 `bad_input`: a body that is not exactly one of the erasure's targets (target.ts),
 *   or that is not JSON.
 * - 404 `not_found`: nothing stored matches in the caller's tenant, or an erasure id that is
 *   unknown or another tenant's; a foreign tenant's run reads exactly like a missing one.
 */
import { Hono } from 'hono';
import { allow } from '../auth/route-auth.js';
import { type Access, accessOf, withNamedTenant } from '../auth/access.js';
import { ApiError } from '../errors.js';
import { jsonResponse } from '../http/json-response.js';
import type { Logger } from '../logger.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { Database } from '../store/database.js';
import type { ErasureFeed } from './erasure-feed.js';
import { readErasure, recordErasure, type ErasureRecord } from './erasures.js';
import { readErasureTarget } from './target.js';

export interface ErasureRouteDeps {
  db: Database;
  payloads: PayloadStore;
  feed: ErasureFeed;
  logger: Logger;
  /** runs after an erasure is recorded (wakes the purge) */
  onRecorded?: (erasure: ErasureRecord) => void;
}

const MAX_BODY_BYTES = 64 * 1024;

/**
 * The tenant an erasure acts in: the caller's own, or for an operator (an admin, or anyone on
 * an open server) every tenant unless the request names one with `?tenant=`.
 */
function erasingTenant(access: Access, named: string | undefined): string | null {
  if (!access.operator) return access.tenant;
  return named === undefined ? null : withNamedTenant(access, named).tenant;
}

export function createErasureRoutes(deps: ErasureRouteDeps): Hono {
  const app = new Hono();

  app.post('/v1/erasures', allow.write, async (c) => {
    const access = accessOf(c);
    const tenant = erasingTenant(access, c.req.query('tenant'));
    const text = await c.req.text();
    if (Buffer.byteLength(text) > MAX_BODY_BYTES)
      throw new ApiError('too_large', `an erasure request is at most ${MAX_BODY_BYTES} bytes`);
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      throw new ApiError('bad_input', 'malformed JSON in the request body');
    }
    const target = readErasureTarget(body);
    const erasure = await recordErasure(deps.db, deps.payloads, tenant, target, { access, logger: deps.logger });
    deps.feed.record(erasure.notice);
    deps.onRecorded?.(erasure);
    const status = erasure.receipt.payloads > erasure.namedPayloads.length ? 'purging' : 'complete';
    return jsonResponse({ id: erasure.id, receipt: erasure.receipt, status }, 202);
  });

  app.get('/v1/erasures/:id', allow.read, async (c) => {
    const id = c.req.param('id');
    const view = await readErasure(deps.db, id, erasingTenant(accessOf(c), c.req.query('tenant')));
    if (!view) throw new ApiError('not_found', `no erasure ${JSON.stringify(id)}`);
    return jsonResponse(view);
  });

  return app;
}
