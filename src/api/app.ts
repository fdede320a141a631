/**
 * @module api/app
 * The one HTTP application (default port 4318): OTLP/HTTP receivers, health, metrics and the
 * read API. Route groups are built by their own modules and mounted here; every error any of
 * them throws is rendered by the one onError (http/error-response.ts).
 * Every request gets an id (http/request-id.ts) that its log lines carry.
 */
import { Hono } from 'hono';
import { ApiError } from '../errors.js';
import { createErrorHandler, errorResponse } from '../http/error-response.js';
import { jsonResponse } from '../http/json-response.js';
import { requestIds } from '../http/request-id.js';
import { observeRequestSeconds } from '../http/request-metrics.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/metrics.js';

export interface AppParts {
  /** route groups mounted at the root, in order */
  routes: Hono[];
  ready(): Promise<{ ok: boolean; reason?: string }>;
  logger: Logger;
  /** request latency per route is observed here when given */
  metrics?: Metrics;
}

export function createApp(parts: AppParts): Hono {
  const app = new Hono();
  app.use(requestIds());
  if (parts.metrics) app.use(observeRequestSeconds(parts.metrics));
  app.get('/healthz', () => jsonResponse({ status: 'ok' }));
  app.get('/readyz', async () => {
    const state = await parts.ready();
    const body = state.ok ? { status: 'ready' } : { status: 'not_ready', reason: state.reason };
    return jsonResponse(body, state.ok ? 200 : 503);
  });
  for (const routes of parts.routes) app.route('/', routes);
  app.notFound(() => errorResponse(new ApiError('not_found', 'no such route')));
  app.onError(createErrorHandler(parts.logger));
  return app;
}
