/**
 * @module api/app
 * The one HTTP application (default port 4318): OTLP/HTTP receivers, health, metrics and the
 * read API, behind one middleware that enforces each route's auth decision
 * (auth/route-auth.ts). Route groups are built by their own modules and mounted here; every
 * error any of them throws is rendered by the one onError (http/error-response.ts).
 * Every request gets an id (http/request-id.ts) that its log lines carry.
 */
import { Hono } from 'hono';
import { allow, authenticate, type AuthenticateSettings } from '../auth/route-auth.js';
import type { Credentials } from '../auth/credentials.js';
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
  /** absent: an open server that checks no Host (route groups under test) */
  auth?: { credentials: Credentials | null; settings: AuthenticateSettings };
}

export function createApp(parts: AppParts): Hono {
  const app = new Hono();
  app.use(requestIds());
  if (parts.metrics) app.use(observeRequestSeconds(parts.metrics));
  // Then every route's auth decision (auth/route-auth.ts) holds before any of its handlers run.
  app.use('*', authenticate(parts.auth?.credentials ?? null, parts.auth?.settings ?? { allowedHosts: '*' }));
  app.get('/healthz', allow.public, () => jsonResponse({ status: 'ok' }));
  app.get('/readyz', allow.public, async () => {
    const state = await parts.ready();
    const body = state.ok ? { status: 'ready' } : { status: 'not_ready', reason: state.reason };
    return jsonResponse(body, state.ok ? 200 : 503);
  });
  for (const routes of parts.routes) app.route('/', routes);
  app.notFound(() => errorResponse(new ApiError('not_found', 'no such route')));
  app.onError(createErrorHandler(parts.logger));
  return app;
}
