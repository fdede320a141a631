/**
 * @module exporter/tapedeck-span-exporter
 * A SpanExporter for @opentelemetry/sdk-trace-base that writes straight into tapedeck's
 * store through the same ingest core as the OTLP receivers: for apps that want no collector.
 *
 * It never throws into the app: every outcome reaches resultCallback exactly once, failures
 * as ExportResultCode.FAILED with the error. A transient failure (the database or payload
 * store unavailable, ingest busy) is retried within `timeoutMillis`, as the OTLP exporters
 * retry a 503: a span processor drops what an export reports FAILED. Its own database writes run with tracing
 * suppressed, so an instrumented `pg` does not trace them. shutdown() is idempotent and
 * waits for exports in flight; exports after shutdown fail.
 */
import { context } from '@opentelemetry/api';
import { BindOnceFuture, ExportResultCode, suppressTracing, type ExportResult } from '@opentelemetry/core';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { loadConfig, type Config } from '../config.js';
import { ApiError, errorTable } from '../errors.js';
import { ingestSpans } from '../ingest/ingest.js';
import { silentLogger } from '../logger.js';
import { isStoreUnavailable, openStore, type Store } from '../open-store.js';
import type { SpanRecord } from '../spans/span-record.js';
import { readableSpanToRecord } from './readable-span.js';

/** The OTLP exporters' default timeoutMillis, well inside a BatchSpanProcessor's 30 s. */
const DEFAULT_TIMEOUT_MS = 10_000;
const FIRST_RETRY_MS = 200;
const MAX_RETRY_MS = 2_000;

/** Whether the same export may succeed later. */
function isTransient(error: unknown): boolean {
  return isStoreUnavailable(error) || (error instanceof ApiError && errorTable[error.type].retryable);
}

export interface TapedeckSpanExporterOptions {
  /** an open store to write into (shared with a server in the same process) */
  store?: Store;
  /** otherwise a store is opened from this configuration (defaults: TAPEDECK_* environment) */
  config?: Partial<Config>;
  /** tenant the spans are stored under; default none */
  tenant?: string;
  /** how long one export retries a transient failure before it reports FAILED; default 10 s */
  timeoutMillis?: number;
}

export class TapedeckSpanExporter implements SpanExporter {
  private storePromise: Promise<Store> | undefined;
  private readonly ownsStore: boolean;
  private readonly pending = new Set<Promise<void>>();
  private readonly shutdownOnce: BindOnceFuture<void>;
  private stopped = false;

  constructor(private readonly options: TapedeckSpanExporterOptions = {}) {
    this.ownsStore = !options.store;
    if (options.store) this.storePromise = Promise.resolve(options.store);
    this.shutdownOnce = new BindOnceFuture(this.doShutdown, this);
  }

  export(spans: ReadableSpan[], resultCallback: (result: ExportResult) => void): void {
    if (this.stopped) {
      setImmediate(() =>
        resultCallback({ code: ExportResultCode.FAILED, error: new Error('TapedeckSpanExporter is shut down') }),
      );
      return;
    }
    const deadline = Date.now() + (this.options.timeoutMillis ?? DEFAULT_TIMEOUT_MS);
    const work = context.with(suppressTracing(context.active()), () =>
      this.write(spans.map(readableSpanToRecord), deadline),
    );
    const settled = work.then(
      () => resultCallback({ code: ExportResultCode.SUCCESS }),
      (error: unknown) =>
        resultCallback({
          code: ExportResultCode.FAILED,
          error: error instanceof Error ? error : new Error(String(error)),
        }),
    );
    this.pending.add(settled);
    void settled.finally(() => this.pending.delete(settled));
  }

  /** Stores the records, retrying transient failures with jittered backoff until the deadline. */
  private async write(records: SpanRecord[], deadline: number): Promise<void> {
    for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 1.5, MAX_RETRY_MS)) {
      try {
        const store = await this.store();
        await ingestSpans(records, { tenant: this.options.tenant ?? '' }, store.ingest);
        return;
      } catch (error) {
        const wait = delay * (0.8 + 0.4 * Math.random());
        if (!isTransient(error) || Date.now() + wait >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  /** Waits for the exports already handed to this exporter. */
  async forceFlush(): Promise<void> {
    await Promise.all([...this.pending]);
  }

  shutdown(): Promise<void> {
    return this.shutdownOnce.call();
  }

  private store(): Promise<Store> {
    this.storePromise ??= openStore({ ...loadConfig(process.env, {}), ...this.options.config }, silentLogger()).catch(
      (error: unknown) => {
        this.storePromise = undefined; // the next export tries again
        throw error;
      },
    );
    return this.storePromise;
  }

  private async doShutdown(): Promise<void> {
    this.stopped = true;
    await this.forceFlush();
    if (this.ownsStore && this.storePromise) {
      const store = await this.storePromise.catch(() => undefined);
      await store?.close();
    }
  }
}
