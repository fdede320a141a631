/**
 * @module testing/cassette-server
 * A replay straight from a cassette file: the replay proxy (replay/routes.ts) with the
 * cassette as its tape source instead of the store, served on its own port. No database is
 * opened and no data directory written; the routes make no outbound request, so a replay
 * from a file has no route to a model provider (fail-closed). The cassette is audited whole
 * before anything listens. What `tapedeck replay --cassette` and `replayCassette` both run.
 */
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { Hono } from 'hono';
import { type CassetteLimits, defaultCassetteLimits } from '../cassettes/format.js';
import { type LoadedCassette, loadCassette, tapeOfRun } from '../cassettes/load.js';
import { ApiError } from '../errors.js';
import { createErrorHandler, errorResponse } from '../http/error-response.js';
import { silentLogger, type Logger } from '../logger.js';
import { createReplayRoutes, defaultReplaySettings } from '../replay/index.js';

export interface CassetteServerOptions {
  cassette: string;
  host?: string;
  /** 0: a free port */
  port?: number;
  mode?: 'strict' | 'loose';
  timing?: 'fast' | 'recorded';
  speed?: number;
  /** the run to replay (default: the cassette's root run) */
  run?: string;
  limits?: CassetteLimits;
  logger?: Logger;
}

export interface CassetteServer {
  /** the replay's creation answer: id, run, mode, steps, llm_steps, base_urls (absolute), ... */
  replay: Record<string, unknown> & { id: string; base_urls: { openai: string; anthropic: string } };
  origin: string;
  port: number;
  cassette: LoadedCassette;
  close(): Promise<void>;
}

export async function startCassetteServer(options: CassetteServerOptions): Promise<CassetteServer> {
  const cassette = await loadCassette(options.cassette, options.limits ?? defaultCassetteLimits);
  const timing = new Map<string, bigint | null>();
  for (const r of cassette.runs)
    for (const t of r.timing.steps)
      timing.set(`${r.run}\n${t.step}`, typeof t.first_chunk_ns === 'bigint' ? t.first_chunk_ns : null);
  let origin = '';
  const replays = createReplayRoutes(
    {
      loadTape: async (run) => tapeOfRun(cassette, run),
      readPayload: async (ref) => cassette.blobs.get(ref),
      firstChunkNs: (run, step) => timing.get(`${run}\n${step}`) ?? null,
      baseUrl: () => origin,
    },
    defaultReplaySettings,
  );
  const app = new Hono();
  app.route(defaultReplaySettings.mountPath, replays);
  app.notFound(() => errorResponse(new ApiError('not_found', 'no such route')));
  app.onError(createErrorHandler(options.logger ?? silentLogger()));

  const host = options.host ?? '127.0.0.1';
  const server: ServerType = await new Promise((resolve, reject) => {
    const s = serve({ fetch: app.fetch, hostname: host, port: options.port ?? 0 }, () => resolve(s));
    s.once('error', reject);
  });
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  const port = (server.address() as AddressInfo).port;
  origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  const created = await app.request(defaultReplaySettings.mountPath, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      run: options.run ?? cassette.manifest.root_run,
      mode: options.mode ?? 'strict',
      timing: options.timing ?? 'fast',
      speed: options.speed ?? 1,
    }),
  });
  const replay = (await created.json()) as CassetteServer['replay'] & { error?: { message: string } };
  if (created.status !== 201) {
    await close();
    throw new Error(`the cassette's run cannot be replayed: ${replay.error?.message ?? created.status}`);
  }
  return { replay, origin, port, cassette, close };
}
