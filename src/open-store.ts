/**
 * @module open-store
 * Opens what every command needs from config: the database (PGlite under <dataDir>/pglite
 * when no URL is set, else PostgreSQL), with migrations applied, and the payload store
 * (--payload-store: filesystem under <dataDir>/payloads by default, the database, or an
 * S3-compatible bucket), counted in the process's metrics when it has them.
 */
import path from 'node:path';
import type { Config } from './config.js';
import { type Logger, ThrottledLog } from './logger.js';
import { type Database, DatabaseUnavailableError } from './store/database.js';
import { createPgDatabase } from './store/pg-database.js';
import { migrate } from './store/migrate.js';
import { type PayloadStore, PayloadStoreUnavailableError } from './payloads/payload-store.js';
import { createFsPayloadStore } from './payloads/fs-payload-store.js';
import { createPgPayloadStore } from './payloads/pg-payload-store.js';
import { countPayloadStore } from './payloads/counted-payload-store.js';
import type { Metrics } from './metrics/metrics.js';
import type { IngestDeps } from './ingest/ingest.js';
import type { DeriveSpans } from './tapes/derived-span.js';
import { createDeriveSpans } from './derive/derive.js';
import { createChunkedDerive } from './derive/derive-thread.js';
import type { SpanRecord } from './spans/span-record.js';
import { ConfigError } from './config.js';
import { loadPricingFile, type PricingTable } from './pricing/pricing-table.js';

export interface Store {
  db: Database;
  payloads: PayloadStore;
  /** spans → steps and run facts, as ingest derives them (with --derive off, only reindex does) */
  derive: DeriveSpans;
  ingest: IngestDeps;
  /** --pricing, loaded and validated at start; null when not configured */
  pricing: PricingTable | null;
  close(): Promise<void>;
}

/**
 * Whether a failure from below the ingest core (opening the store, or a write outside it) is
 * one a retry may cure: the database or the payload store unavailable for now.
 */
export function isStoreUnavailable(error: unknown): boolean {
  return error instanceof DatabaseUnavailableError || error instanceof PayloadStoreUnavailableError;
}

export async function openDatabase(
  config: Pick<Config, 'databaseUrl' | 'dataDir'> & Partial<Pick<Config, 'databasePreparedStatements'>>,
): Promise<Database> {
  if (config.databaseUrl)
    return createPgDatabase(config.databaseUrl, { preparedStatements: config.databasePreparedStatements });
  // PGlite (PostgreSQL in WebAssembly) is loaded only for the embedded store.
  const { createPgliteDatabase } = await import('./store/pglite-database.js');
  return createPgliteDatabase(path.join(config.dataDir, 'pglite'));
}

export interface OpenStoreOptions {
  db?: Database;
  payloads?: PayloadStore;
  /** false: ingest derives on the main thread even where it could use a worker (tests of both ways) */
  deriveWorker?: boolean;
  /** the process's metrics: ingest and the payload store count into them */
  metrics?: Metrics;
}

/** The payload store config selects, and what closing it takes. */
export async function openPayloadStore(
  config: Pick<Config, 'dataDir' | 'payloadStore' | 's3Endpoint' | 's3Bucket' | 's3Prefix' | 's3ForcePathStyle'>,
  db: Database,
): Promise<{ payloads: PayloadStore; close(): void }> {
  switch (config.payloadStore) {
    case 'pg':
      return { payloads: createPgPayloadStore({ db }), close() {} };
    case 's3': {
      // Loaded only when chosen: the AWS SDK is large, and most deployments never need it.
      const { createS3PayloadStore } = await import('./payloads/s3-payload-store.js');
      const store = createS3PayloadStore({
        bucket: config.s3Bucket ?? '',
        prefix: config.s3Prefix,
        endpoint: config.s3Endpoint,
        forcePathStyle: config.s3ForcePathStyle,
      });
      return { payloads: store, close: () => store.close() };
    }
    default:
      return { payloads: createFsPayloadStore({ dir: path.join(config.dataDir, 'payloads') }), close() {} };
  }
}

export async function openStore(config: Config, logger: Logger, options: OpenStoreOptions = {}): Promise<Store> {
  const pricing = config.pricingFile ? await loadPricing(config.pricingFile) : null;
  const db = options.db ?? (await openDatabase(config));
  try {
    const applied = await migrate(db);
    if (applied.length > 0) logger.info({ migrations: applied }, 'applied database migrations');
  } catch (error) {
    await db.close().catch(() => {});
    throw error;
  }
  const opened = options.payloads ? { payloads: options.payloads, close() {} } : await openPayloadStore(config, db);
  const payloads = options.metrics
    ? countPayloadStore(opened.payloads, options.payloads ? 'given' : config.payloadStore, options.metrics)
    : opened.payloads;
  // One line a minute at most, however many spans of a batch (or of many) a bug trips over.
  const unreadable = new ThrottledLog<{ span: SpanRecord; error: unknown; layout: string }>(
    (count, { span, error, layout }) =>
      logger.warn(
        { spans: count, traceId: span.traceId, spanId: span.spanId, layout, err: error },
        `could not read ${count === 1 ? 'a span' : `${count} spans`} as a step; stored with no step (tapedeck reindex re-derives them after a normalizer fix); the last one named here`,
      ),
  );
  const onDialectError = (span: SpanRecord, error: unknown, layout: string): void =>
    unreadable.record({ span, error, layout });
  const derive = createDeriveSpans(
    { payloads, onDialectError },
    { payloadThresholdBytes: config.payloadThresholdBytes },
  );
  // Where the database takes COPY (a PostgreSQL server), ingest derives on a worker thread,
  // started with the first request (commands that ingest nothing never start it).
  const chunked =
    config.derive && db.kind === 'postgres'
      ? createChunkedDerive({
          payloadThresholdBytes: config.payloadThresholdBytes,
          onDialectError,
          worker: options.deriveWorker,
          onWorkerUnusable: (error) =>
            logger.warn(
              { err: error },
              'the derive worker script could not load (is dist/ built?); ingest derives on the main thread from now on',
            ),
          onWorkerLost: (error) =>
            logger.warn(
              { err: error },
              'the derive worker stopped; the requests it was deriving were answered 503 (their senders retry)',
            ),
        })
      : null;
  return {
    db,
    payloads,
    derive,
    ingest: { db, derive: config.derive ? derive : null, chunked, metrics: options.metrics },
    pricing,
    async close() {
      unreadable.flush();
      await chunked?.close();
      opened.close();
      await db.close();
    },
  };
}

async function loadPricing(file: string): Promise<PricingTable> {
  try {
    return await loadPricingFile(file);
  } catch (error) {
    throw new ConfigError('--pricing', (error as Error).message);
  }
}
