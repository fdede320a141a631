/**
 * @module metrics/routes
 * GET /metrics: the process's metrics in the Prometheus text exposition format, for a
 * Prometheus server (or an OpenTelemetry Collector's prometheus receiver) to scrape.
 */
import { Hono } from 'hono';
import type { Metrics } from './metrics.js';

export function createMetricsRoutes(metrics: Metrics): Hono {
  const app = new Hono();
  app.get('/metrics', async () => {
    const text = await metrics.registry.metrics();
    return new Response(text, { status: 200, headers: { 'content-type': metrics.registry.contentType } });
  });
  return app;
}
