/**
 * @module api/read-routes
 * The read API over the store: tapes and runs here; replay and diff come from their own
 * modules' route factories, wired to the same tape reader.
 */
import { Hono } from 'hono';
import { tenantOf } from '../auth/access.js';
import { allow } from '../auth/route-auth.js';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import type { Store } from '../open-store.js';
import { readTape } from '../tapes/tape-service.js';
import { readTapeJson } from '../tapes/tape-json.js';
import { chunkedResponse } from '../http/chunked-body.js';
import { InvalidCursorError, listRuns } from '../tapes/run-reader.js';
import { withCosts } from '../tapes/run-costs.js';
import type { RunOutcome } from '../tapes/run-outcome.js';
import { jsonResponse } from '../http/json-response.js';
import { parseBoolean, parseLimit, storedRunId } from '../http/query-params.js';
import { createDiffRoutes } from '../diff/routes.js';
import { loadDiffTape } from '../diff/load-tape.js';
import { createRecallRoutes } from '../recall/routes.js';
import { createRunRoutes } from './run-routes.js';
import { createCassetteRoutes } from '../cassettes/routes.js';
import { createReplayRoutes, defaultReplaySettings, type ReplayOwners, type Upstream } from '../replay/index.js';
import { PayloadIntegrityError } from '../payloads/payload-store.js';
import { ingestSpans } from '../ingest/ingest.js';
import { createRequestSlots, requestSlotsFor, WAITING_PER_SLOT } from '../http/request-slots.js';
import { ErasureFeed } from '../erasure/erasure-feed.js';
import { createErasureRoutes } from '../erasure/routes.js';
import { type Logger, silentLogger } from '../logger.js';
import { type Metrics, observeGauge } from '../metrics/metrics.js';

export interface ReadRouteOptions {
  /** erasures recorded here reach the replays held here through it */
  feed?: ErasureFeed;
  logger?: Logger;
  /** runs after each erasure is recorded (wakes the payload purge) */
  onErasure?: () => void;
  /** the replay registry's counts are reported here when given */
  metrics?: Metrics;
  /** replicas sharing one database: which one holds each replay */
  owners?: ReplayOwners;
}

const MAX_RUNS_PAGE = 1000;
const DEFAULT_RUNS_PAGE = 50;
const RUN_OUTCOMES: readonly RunOutcome[] = ['success', 'failure', 'unknown'];

/** The read API's paths: what --read-concurrency bounds. */
const READ_PATHS = /^\/v1\/(tapes|runs|diff|recall|datasets)(\/|$)|^\/mcp$/;

/**
 * The read and replay routes, behind their concurrency bounds (--read-concurrency,
 * --replay-concurrency; http/request-slots.ts). The first group holds only the bounds, so
 * they run before any handler of these routes; other paths pass through.
 */
export function createReadRoutes(store: Store, config: Config, options: ReadRouteOptions = {}): Hono[] {
  const feed = options.feed ?? new ErasureFeed();
  const metrics = options.metrics;
  const logger = options.logger ?? silentLogger();
  const slotSettings = (kind: string, setting: string, concurrency: number) => ({
    kind,
    setting,
    concurrency,
    maxWaiting: concurrency * WAITING_PER_SLOT,
    waitMs: config.readQueueTimeoutMs,
  });
  const readSlots = createRequestSlots(slotSettings('read', '--read-concurrency', config.readConcurrency));
  const replaySlots = createRequestSlots(slotSettings('replay', '--replay-concurrency', config.replayConcurrency));
  const replayPath = defaultReplaySettings.mountPath;
  const bounds = new Hono();
  bounds.use(
    '*',
    requestSlotsFor((path) => READ_PATHS.test(path), readSlots),
  );
  bounds.use(
    '*',
    requestSlotsFor((path) => path === replayPath || path.startsWith(`${replayPath}/`), replaySlots),
  );

  const app = new Hono();

  app.get('/v1/tapes/:run', allow.read, async (c) => {
    const tenant = tenantOf(c);
    const run = storedRunId(c.req.param('run'));
    const resolve = parseBoolean(c.req.query('resolve'), 'resolve');
    const notFound = () => new ApiError('not_found', `no run ${JSON.stringify(run)}`);
    if (resolve) {
      const tape = await readTape(store, tenant, run, { resolve, maxResolveBytes: config.tapeMaxBytes });
      if (!tape) throw notFound();
      return jsonResponse(tape);
    }
    // Unresolved, the stored text is spliced into the answer, sent as it is written (tapes/tape-json.ts).
    const chunks = await readTapeJson(store, tenant, run);
    if (!chunks) throw notFound();
    return chunkedResponse(c, chunks, { 'content-type': 'application/json' }, (err) =>
      logger.error({ err, requestId: c.get('requestId'), method: c.req.method, path: c.req.path }, 'answer cut short'),
    );
  });

  app.get('/v1/runs', allow.read, async (c) => {
    const tenant = tenantOf(c);
    const limit = parseLimit(c.req.query('limit'), 'limit', {
      fallback: DEFAULT_RUNS_PAGE,
      min: 1,
      max: MAX_RUNS_PAGE,
    });
    try {
      const outcome = c.req.query('outcome') || undefined;
      if (outcome !== undefined && !RUN_OUTCOMES.includes(outcome as RunOutcome)) {
        throw new ApiError(
          'bad_input',
          `outcome must be one of ${RUN_OUTCOMES.join(', ')}, got ${JSON.stringify(outcome)}`,
        );
      }
      const cursor = c.req.query('cursor') || undefined;
      const page = await listRuns(store.db, tenant, { limit, cursor, outcome: outcome as RunOutcome | undefined });
      return jsonResponse({ ...page, runs: await withCosts(store.db, tenant, page.runs, store.pricing) });
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new ApiError('bad_input', error.message);
      throw error;
    }
  });

  const diff = createDiffRoutes(
    { loadTape: (run, t, opts) => loadDiffTape(store, t ?? '', run, opts) },
    { queryDeadlineMs: config.queryDeadlineMs, pricing: store.pricing, tenantOf },
  );

  const replayMaxSpans = defaultReplaySettings.maxRunSpans;
  const replays = createReplayRoutes(
    {
      // A run longer than the bound comes back truncated, which the replay refuses.
      loadTape: (run, t) => readTape(store, t ?? '', run, { maxSpans: replayMaxSpans }),
      upstreams: upstreamsOf(config),
      // A fork's calls go into the store through the ingest path, like any exporter's spans.
      recordSpans: async (spans, spanTenant) => {
        await ingestSpans(spans, { tenant: spanTenant }, store.ingest);
      },
      // A corrupt payload is unreadable, like a missing one: the replay refuses it by name.
      // relative base_urls, or built on --public-url: never on the request's Host header
      baseUrl: () => config.publicUrl ?? '',
      readPayload: (ref) =>
        store.payloads.get(ref).catch((error: unknown) => {
          if (error instanceof PayloadIntegrityError) return undefined;
          throw error;
        }),
      erasures: feed,
      owners: options.owners,
      observeRegistry: metrics
        ? (registry) => {
            observeGauge(metrics, { name: 'tapedeck_replays', help: 'Live replays held in memory.' }, () => [
              { value: registry.size },
            ]);
            observeGauge(
              metrics,
              {
                name: 'tapedeck_replay_bytes',
                help: 'Memory charged to live replays, as counted against the replay bounds.',
              },
              () => [{ value: registry.countedBytes }],
            );
          }
        : undefined,
    },
    { ...defaultReplaySettings, tapeMaxBytes: config.tapeMaxBytes, bodyTimeoutMs: config.bodyTimeoutMs },
  );
  const mounted = new Hono();
  mounted.route(defaultReplaySettings.mountPath, replays);

  const recall = createRecallRoutes(
    { db: store.db, payloads: store.payloads, pricing: store.pricing },
    { queryDeadlineMs: config.queryDeadlineMs, tenantOf },
  );

  const erasures = createErasureRoutes({
    db: store.db,
    payloads: store.payloads,
    feed,
    logger,
    onRecorded: options.onErasure,
  });

  return [bounds, app, createRunRoutes(store, config), createCassetteRoutes(store), diff, recall, mounted, erasures];
}

/** The fork upstreams configured (--upstream-openai, --upstream-anthropic), with their keys. */
function upstreamsOf(config: Config): { openai?: Upstream; anthropic?: Upstream } {
  const out: { openai?: Upstream; anthropic?: Upstream } = {};
  if (config.upstreamOpenai) out.openai = { baseUrl: config.upstreamOpenai, key: config.upstreamOpenaiKey };
  if (config.upstreamAnthropic) out.anthropic = { baseUrl: config.upstreamAnthropic, key: config.upstreamAnthropicKey };
  return out;
}

/**
 * The MCP tools at /mcp (`serve --mcp`), loaded only then: the MCP SDK and its schemas weigh
 * tens of MiB that a server without them would carry.
 */
export async function createMcpRoutesIfWanted(store: Store, config: Config): Promise<Hono[]> {
  if (!config.mcp) return [];
  const [{ createMcpRoutes }, { tapedeckVersion }] = await Promise.all([
    import('../mcp/routes.js'),
    import('../mcp/version.js'),
  ]);
  return [
    createMcpRoutes(store, {
      queryDeadlineMs: config.queryDeadlineMs,
      tapeMaxBytes: config.tapeMaxBytes,
      tenant: '',
      version: tapedeckVersion(),
    }),
  ];
}
