/**
 * Route groups served the way the server serves them: mounted in the one application, whose
 * onError renders every error (src/api/app.ts). Handlers throw; only the app answers.
 */
import type { Hono } from 'hono';
import { createApp } from '../../src/api/app.js';
import { type Logger, silentLogger } from '../../src/logger.js';

export function appWith(routes: Hono | Hono[], logger: Logger = silentLogger()): Hono {
  return createApp({
    routes: Array.isArray(routes) ? routes : [routes],
    ready: async () => ({ ok: true }),
    logger,
  });
}
