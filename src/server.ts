/**
 * @module server
 * Composition root for `tapedeck serve`: config → database → migrations → payload store →
 * ingest core → HTTP and gRPC listeners. Start and stop are symmetric; a partial start is
 * undone. close() stops accepting, lets in-flight exports finish (within the grace period),
 * then closes the database.
 */
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { Hono } from 'hono';
import type * as grpc from '@grpc/grpc-js';
import type { Config } from './config.js';
import { ConfigError, redact } from './config.js';
import { configuredTokens, isLoopbackAddress } from './auth/configured-tokens.js';
import { type Credentials, openCredentials } from './auth/credentials.js';
import { createCredentialRoutes } from './api/credential-routes.js';
import type { Logger } from './logger.js';
import { openStore, type Store } from './open-store.js';
import { NORMALIZER_VERSION } from './normalize/normalize.js';
import { hasStepsOlderThan, reindexReasons } from './tapes/reindex.js';
import type { Database } from './store/database.js';
import type { PayloadStore } from './payloads/payload-store.js';
import { createAdmission, DEFAULT_WORK_UNITS, SPANS_ONLY_WORK_UNITS } from './ingest/admission.js';
import { JSON_STRING_WASM_LOADED } from './json/json-string.js';
import { createOtlpHttpRoutes } from './ingest/http-receiver.js';
import { bindGrpcServer, createGrpcServer } from './ingest/grpc-receiver.js';
import { createApp } from './api/app.js';
import { createMcpRoutesIfWanted, createReadRoutes } from './api/read-routes.js';
import { createConsoleRoutes } from './console/routes.js';
import { isSchemaCurrent } from './store/migrate.js';
import { PayloadPurge } from './erasure/purge.js';
import { keptPartitionsWarning, PartitionWorker } from './erasure/partitions.js';
import { ErasureFeed } from './erasure/erasure-feed.js';
import { ErasurePoll } from './erasure/erasure-poll.js';
import { DatabaseReplayOwners, replicaUrlOf } from './replay/owners.js';
import {
  DEFAULT_BATCH_SPANS,
  DEFAULT_INTERVAL_MS,
  keepsDayPartitions,
  RetentionWorker,
  type RetentionSettings,
} from './erasure/retention.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { createMetricsRoutes } from './metrics/routes.js';
import { allow } from './auth/route-auth.js';
import { observeServer } from './metrics/observe-server.js';

export interface RunningTapedeck {
  host: string;
  httpPort: number;
  grpcPort: number;
  /** where the data lives: the redacted database URL or the embedded database directory */
  dataLocation: string;
  store: Store;
  /** what GET /metrics reports */
  metrics: Metrics;
  /** the HTTP application: every route, behind its auth decision */
  app: Hono;
  /** configured and minted credentials; open: there are none (docs/security.md) */
  credentials: Credentials;
  close(): Promise<void>;
}

/** Collaborators a caller (tests, an embedding app) hands in instead of opening them from config. */
export interface StartOptions {
  /** an open database; it is migrated, and closed with the server */
  db?: Database;
  payloads?: PayloadStore;
  /** false: ingest derives on the main thread only (tests of both ways) */
  deriveWorker?: boolean;
  /** milliseconds between retention passes (default a minute; tests run them often) */
  retentionIntervalMs?: number;
}

export async function startTapedeck(
  config: Config,
  logger: Logger,
  options: StartOptions = {},
): Promise<RunningTapedeck> {
  const metrics = createMetrics();
  const configured = configuredTokens(config);
  const store = await openStore(config, logger, { ...options, metrics });
  let credentials: Credentials;
  try {
    credentials = await openCredentials(store.db, configured, logger);
    refuseOpenOnNetwork(config, credentials);
  } catch (error) {
    await store.close().catch(() => {});
    throw error;
  }
  if (credentials.open && !isLoopbackAddress(config.host)) {
    logger.warn({ host: config.host }, 'serving with no credentials beyond loopback (--allow-open)');
  }
  await warnIfStepsAreOlder(store, logger);
  // both WebAssembly modules (the JSON escaper, recall's tokenizer) use SIMD: one check says it for both
  if (!JSON_STRING_WASM_LOADED) {
    logger.warn(
      "WebAssembly SIMD is not available here: ingest escapes JSON strings with JSON.stringify and finds recall's words in JavaScript, several times slower for long prompts",
    );
  }
  // Waiting gRPC messages may hold one maximal body between them (requests past that are
  // answered busy): with the large one being worked on, two at most in memory.
  const workUnits = config.derive ? DEFAULT_WORK_UNITS : SPANS_ONLY_WORK_UNITS;
  const admission = createAdmission(config.maxInflightRequests, workUnits, {
    queueTimeoutMs: config.queueTimeoutMs,
    maxHeldBytes: config.maxBodyBytes,
  });
  observeServer(metrics, {
    workUnits: () => ({ inUse: admission.unitsInUse, waiting: admission.unitsWaiting }),
    pool: store.db.poolUsage?.bind(store.db),
  });
  // Payloads erasures and retention leave to purge; retention when a bound is set.
  const purge = new PayloadPurge(store.db, store.payloads, logger);
  const retention = retentionOf(config, store, logger, () => purge.wake(), options.retentionIntervalMs);
  const partitions = keepsDayPartitions(retentionBounds(config))
    ? new PartitionWorker(store.db, (error) =>
        logger.warn({ err: error }, "could not make the coming days' partitions; trying again within the hour"),
      )
    : null;
  // Replicas on one PostgreSQL database share replays and hear of each other's erasures.
  const shared = store.db.kind === 'postgres';
  const owners = shared ? new DatabaseReplayOwners(store.db) : undefined;
  const feed = new ErasureFeed(undefined, undefined, shared ? store.db : undefined);
  const erasurePoll = shared ? new ErasurePoll(feed, logger) : undefined;
  const background = { purge, retention, partitions, owners, erasurePoll };
  let http: ServerType | undefined;
  let grpcServer: grpc.Server | undefined;
  // Where retention keeps day partitions, today's exist before the first span can arrive: a
  // day whose rows went to the default partition keeps them there, where retention cannot
  // drop the day whole.
  if (partitions) await partitions.start();
  else await warnOfKeptPartitions(store, logger);
  try {
    const receiverDeps = { ingest: store.ingest, admission, logger, credentials };
    const app = createApp({
      logger,
      metrics,
      auth: { credentials, settings: { allowedHosts: config.allowedHosts } },
      routes: [
        createOtlpHttpRoutes(receiverDeps, config),
        createMetricsRoutes(metrics, allow.read),
        ...createReadRoutes(store, config, { logger, onErasure: () => purge.wake(), metrics, feed, owners }),
        ...(await createMcpRoutesIfWanted(store, config)),
        createConsoleRoutes(),
        createCredentialRoutes(credentials),
      ],
      async ready() {
        try {
          await store.db.ping();
        } catch (error) {
          return { ok: false, reason: `database unreachable: ${(error as Error).message}` };
        }
        return (await isSchemaCurrent(store.db)) ? { ok: true } : { ok: false, reason: 'migrations not applied' };
      },
    });
    const httpPort = await new Promise<number>((resolve, reject) => {
      const server = serve(
        { fetch: app.fetch, hostname: config.host, port: config.httpPort, serverOptions: httpTimeouts(config) },
        (info: AddressInfo) => resolve(info.port),
      );
      server.once('error', reject);
      http = server;
    });
    grpcServer = createGrpcServer(receiverDeps, config);
    const grpcPort = await bindGrpcServer(grpcServer, config.host, config.grpcPort);
    purge.start();
    retention?.start();
    owners?.listening(config.replicaUrl ?? replicaUrlOf(config.host, httpPort));
    erasurePoll?.start();

    let closing: Promise<void> | undefined;
    return {
      host: config.host,
      httpPort,
      grpcPort,
      dataLocation: config.databaseUrl ? redact(config.databaseUrl) : path.join(config.dataDir, 'pglite'),
      store,
      metrics,
      app,
      credentials,
      close() {
        closing ??= shutdown(http, grpcServer, store, background, admission.drained(), config.shutdownGraceMs, logger);
        return closing;
      },
    };
  } catch (error) {
    await shutdown(http, grpcServer, store, background, Promise.resolve(), 0, logger).catch(() => {});
    throw error;
  }
}

/**
 * The HTTP server's own timeouts. Node's would answer 408 (which OTLP senders do not retry)
 * to an export that waited for its turn and then read its body slowly, so the request
 * timeout leaves room for both of ours (--queue-timeout-ms, --body-timeout-ms), which answer
 * retryably first. Headers come at once from any real sender; keep-alive outlasts the 60 s
 * idle timeout common to load balancers and Collector connection pools, so a connection is
 * not closed under a request being sent on it. Node checks these every 30 s by default:
 * every second here, so they hold to the second.
 */
export function httpTimeouts(config: Pick<Config, 'queueTimeoutMs' | 'bodyTimeoutMs'>) {
  const headersTimeout = 20_000;
  return {
    headersTimeout,
    // Node refuses a request timeout shorter than the headers one
    requestTimeout: Math.max(headersTimeout, config.queueTimeoutMs + config.bodyTimeoutMs + 10_000),
    keepAliveTimeout: 65_000,
    connectionsCheckingInterval: 1_000,
  };
}

/** The retention worker, when --retention or a tenant's override sets a bound. */
function retentionOf(
  config: Config,
  store: Store,
  logger: Logger,
  onPayloads: () => void,
  intervalMs = DEFAULT_INTERVAL_MS,
): RetentionWorker | null {
  const bounded = config.retentionMs !== null || [...config.retentionTenants.values()].some((ms) => ms !== null);
  if (!bounded) return null;
  return new RetentionWorker(
    store.db,
    { ...retentionBounds(config), batchSpans: DEFAULT_BATCH_SPANS, intervalMs },
    logger,
    onPayloads,
  );
}

/** The configured bounds, as retention reads them: the default and each tenant's. */
function retentionBounds(config: Config): Pick<RetentionSettings, 'defaultMs' | 'tenantsMs'> {
  return { defaultMs: config.retentionMs, tenantsMs: config.retentionTenants };
}

/**
 * The open-server rule (docs/security.md): with no credential of either kind, anyone who can
 * reach the ports reads every stored prompt, so tapedeck listens only on loopback unless the
 * operator said --allow-open.
 */
function refuseOpenOnNetwork(config: Config, credentials: Credentials): void {
  if (!credentials.open || config.allowOpen || isLoopbackAddress(config.host)) return;
  throw new ConfigError(
    '--host',
    `refusing to serve ${config.host} with no credentials: anyone who can reach it could read and write everything. ` +
      'Set TAPEDECK_TOKENS (or TAPEDECK_TOKENS_FILE), or start with --allow-open (TAPEDECK_ALLOW_OPEN=1) to serve an open server on purpose',
  );
}

/**
 * Steps derived before a normalizer fix keep the old reading, and those stored before a
 * migration that changed what derive stores miss it, until reindex: say so at start.
 */
async function warnIfStepsAreOlder(store: Store, logger: Logger): Promise<void> {
  try {
    if (await hasStepsOlderThan(store.db, NORMALIZER_VERSION)) {
      logger.warn(
        { normalizerVersion: NORMALIZER_VERSION },
        `some stored steps were derived by an older normalizer; run \`tapedeck reindex\` to derive them again with version ${NORMALIZER_VERSION}`,
      );
    }
    for (const reason of await reindexReasons(store.db)) {
      logger.warn(`stored steps need \`tapedeck reindex\`: ${reason}`);
    }
  } catch (error) {
    logger.warn({ err: error }, 'could not check whether the stored steps need `tapedeck reindex`');
  }
}

/** Time partitions no retention drops cost every read and write of a span: say so at start. */
async function warnOfKeptPartitions(store: Store, logger: Logger): Promise<void> {
  try {
    const warning = await keptPartitionsWarning(store.db);
    if (warning) logger.warn(warning);
  } catch (error) {
    logger.warn({ err: error }, 'could not count the time partitions');
  }
}

async function shutdown(
  http: ServerType | undefined,
  grpcServer: grpc.Server | undefined,
  store: Store,
  background: {
    purge: PayloadPurge;
    retention: RetentionWorker | null;
    partitions: PartitionWorker | null;
    owners: DatabaseReplayOwners | undefined;
    erasurePoll: ErasurePoll | undefined;
  },
  drained: Promise<void>,
  graceMs: number,
  logger: Logger,
): Promise<void> {
  // A batch being purged or retained is finished (committed) rather than cut off.
  const workersStopped = Promise.all([
    background.purge.stop(),
    background.retention?.stop(),
    background.partitions?.stop(),
  ]);
  background.erasurePoll?.stop();
  const httpClosed = http ? new Promise<void>((resolve) => http!.close(() => resolve())) : Promise.resolve();
  // close() ends the keep-alive connections idle at that moment only; one whose request
  // finishes while draining would hold the close until its keep-alive timeout (5 s).
  const sweep = setInterval(
    () => (http as { closeIdleConnections?: () => void } | undefined)?.closeIdleConnections?.(),
    50,
  );
  sweep.unref();
  const grpcClosed = grpcServer
    ? new Promise<void>((resolve) => grpcServer!.tryShutdown(() => resolve()))
    : Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), graceMs);
    timer.unref();
  });
  const outcome = await Promise.race([
    Promise.all([httpClosed, grpcClosed, drained]).then(() => 'drained' as const),
    grace,
  ]);
  clearTimeout(timer);
  clearInterval(sweep);
  if (outcome === 'timeout') {
    logger.warn({ graceMs }, 'shutdown grace period over; closing with requests still in flight');
    grpcServer?.forceShutdown();
    (http as { closeAllConnections?: () => void } | undefined)?.closeAllConnections?.();
  }
  await workersStopped;
  // Its replays end with it: the other replicas answer 404 for them rather than forward.
  await background.owners?.release().catch((error: unknown) => {
    logger.warn({ err: error }, "could not withdraw this replica's replays from the shared database");
  });
  await store.close();
}
