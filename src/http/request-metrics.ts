/**
 * @module http/request-metrics
 * Observes how long each HTTP request took, labelled by the route pattern that answered it
 * (`/v1/tapes/:run`, not the run id: one series per route, however many runs are read), the
 * transport and the status. A request no route matched counts under "unmatched".
 */
import type { MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { type Metrics, observeRequest } from '../metrics/metrics.js';

export function observeRequestSeconds(metrics: Metrics): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now();
    try {
      await next();
    } finally {
      // Middleware (`use`) is registered for every method; the answering handler is the last
      // route registered for a method.
      const handlers = matchedRoutes(c).filter((r) => r.method !== 'ALL');
      observeRequest(
        metrics,
        { route: handlers.at(-1)?.path ?? 'unmatched', transport: 'http', status: String(c.res.status) },
        (performance.now() - started) / 1000,
      );
    }
  };
}
