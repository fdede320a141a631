/**
 * @module api/app
 * The one HTTP application (default port 4318): OTLP/HTTP receivers, health, and the read
 * API. Route groups are built by their own modules and mounted here; errors thrown as
 * ApiError render as {"error": {"type", "message"}} with sorted keys.
 */
import { Hono } from 'hono';
import { ApiError } from '../errors.js';
import { renderJson } from '../json/canonical.js';
import type { Logger } from '../logger.js';

export interface AppParts {
  /** route groups mounted at the root, in order */
  routes: Hono[];
  ready(): Promise<{ ok: boolean; reason?: string }>;
  logger: Logger;
}

export function createApp(parts: AppParts): Hono {
  const app = new Hono();
  app.get('/healthz', (c) => c.body(renderJson({ status: 'ok' }), 200, { 'content-type': 'application/json' }));
  app.get('/readyz', async (c) => {
    const state = await parts.ready();
    const body = state.ok ? { status: 'ready' } : { status: 'not_ready', reason: state.reason };
    return c.body(renderJson(body), state.ok ? 200 : 503, { 'content-type': 'application/json' });
  });
  for (const routes of parts.routes) app.route('/', routes);
  app.notFound(() => jsonError(new ApiError(404, 'not_found', 'no such route')));
  app.onError((error) => {
    if (error instanceof ApiError) return jsonError(error);
    parts.logger.error({ err: error }, 'request failed');
    return jsonError(new ApiError(500, 'internal', 'internal error; see the server log'));
  });
  return app;
}

export function jsonResponse(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(renderJson(value), { status, headers: { 'content-type': 'application/json', ...headers } });
}

export function jsonError(error: ApiError): Response {
  return jsonResponse(
    { error: { type: error.type, message: error.message, ...error.extra } },
    error.status,
    error.headers,
  );
}
