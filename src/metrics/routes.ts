/**
 * @module metrics/routes
 * GET /metrics: the process's metrics in the Prometheus text exposition format, for a
 * Prometheus server (or an OpenTelemetry Collector's prometheus receiver) to scrape.
 * Its auth decision is handed in by whoever mounts it (metrics/ sits below auth/): a
 * credential, like every read (docs/security.md).
 */
import { Hono, type MiddlewareHandler } from 'hono';
import type { Metrics } from './metrics.js';

export function createMetricsRoutes(metrics: Metrics, allowRead: MiddlewareHandler): Hono {
  const app = new Hono();
  app.get('/metrics', allowRead, async () => {
    const text = await metrics.registry.metrics();
    return new Response(text, { status: 200, headers: { 'content-type': metrics.registry.contentType } });
  });
  return app;
}
