/**
 * @module cassettes/routes
 * `GET /v1/runs/{run}/cassette[?tree=true][&with_spans=true]`: the run (or its tree) as a
 * cassette file (application/x-tar), the same bytes `tapedeck cassette export` writes.
 * 404 when there is no such run; 409 `cassette_refused` when it cannot be exported whole.
 */
import { Hono } from 'hono';
import { tenantOf } from '../auth/access.js';
import { allow } from '../auth/route-auth.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { Queryable } from '../store/database.js';
import { parseBoolean, storedRunId } from '../http/query-params.js';
import { exportCassette } from './export.js';
import { type CassetteLimits, defaultCassetteLimits } from './format.js';

export function createCassetteRoutes(
  deps: { db: Queryable; payloads: PayloadStore },
  limits: CassetteLimits = defaultCassetteLimits,
): Hono {
  const app = new Hono();
  app.get('/v1/runs/:run/cassette', allow.read, async (c) => {
    const run = storedRunId(c.req.param('run'));
    const out = await exportCassette(deps, tenantOf(c), run, {
      tree: parseBoolean(c.req.query('tree'), 'tree'),
      withSpans: parseBoolean(c.req.query('with_spans'), 'with_spans'),
      limits,
    });
    return new Response(new Uint8Array(out.bytes), {
      status: 200,
      headers: {
        'content-type': 'application/x-tar',
        'content-disposition': `attachment; filename="${out.manifest.id}.cassette.tar"`,
        'x-cassette-id': out.manifest.id,
      },
    });
  });
  return app;
}
