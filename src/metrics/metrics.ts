/**
 * @module metrics/metrics
 * The Prometheus metrics of one tapedeck process (GET /metrics, docs/metrics.md): one
 * prom-client registry per process, not the library's global one, so that several servers in
 * one process (tests, an embedding app) each count only their own traffic.
 *
 * Counters and histograms are moved where the thing happens (ingest, the transports, the
 * payload store). Levels that some part already knows (work units, the pool, the replay
 * registry) are read when scraped, through observeGauge, so they cost
 * nothing between scrapes.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export type Transport = 'http' | 'grpc' | 'exporter';

export interface Metrics {
  readonly registry: Registry;
  readonly spansAccepted: Counter;
  readonly spansRejected: Counter<'reason'>;
  readonly spansDeduplicated: Counter;
  readonly logsAccepted: Counter;
  readonly logsRejected: Counter<'reason'>;
  readonly logsDeduplicated: Counter;
  readonly requestSeconds: Histogram<'route' | 'transport' | 'status'>;
  readonly requests: Counter<'route' | 'transport' | 'status'>;
  readonly deriveLagSeconds: Gauge;
  readonly payloadOperations: Counter<'backend' | 'operation'>;
  readonly payloadErrors: Counter<'backend' | 'operation'>;
}

/** Counts one answered request and observes its latency. */
export function observeRequest(
  metrics: Metrics,
  labels: { route: string; transport: Transport; status: string },
  seconds: number,
): void {
  metrics.requestSeconds.observe(labels, seconds);
  metrics.requests.inc(labels);
}

/** One labelled value of a gauge read at scrape time. */
export interface GaugeReading {
  labels?: Record<string, string>;
  value: number;
}

export interface MetricsSettings {
  /** the default Node process metrics (CPU, memory, event loop, GC); on unless false */
  processMetrics?: boolean;
}

// Export requests take from a few milliseconds to the queue timeout plus a large commit.
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

export function createMetrics(settings: MetricsSettings = {}): Metrics {
  const registry = new Registry();
  if (settings.processMetrics !== false) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    spansAccepted: new Counter({
      name: 'tapedeck_spans_accepted_total',
      help: 'Spans received in export requests that were acknowledged (stored now or already stored).',
      registers,
    }),
    spansRejected: new Counter({
      name: 'tapedeck_spans_rejected_total',
      help: 'Spans not stored, by reason: an unusable span (partial success) or the error type its request was answered with.',
      labelNames: ['reason'],
      registers,
    }),
    spansDeduplicated: new Counter({
      name: 'tapedeck_spans_deduplicated_total',
      help: 'Accepted spans that were stored already (redelivery) or twice in one request, so not stored again.',
      registers,
    }),
    logsAccepted: new Counter({
      name: 'tapedeck_log_records_accepted_total',
      help: 'Log records received in export requests that were acknowledged.',
      registers,
    }),
    logsRejected: new Counter({
      name: 'tapedeck_log_records_rejected_total',
      help: 'Log records not stored, by reason, as for spans.',
      labelNames: ['reason'],
      registers,
    }),
    logsDeduplicated: new Counter({
      name: 'tapedeck_log_records_deduplicated_total',
      help: 'Accepted log records that were stored already, so not stored again.',
      registers,
    }),
    requestSeconds: new Histogram({
      name: 'tapedeck_request_duration_seconds',
      help: 'Time to answer a request, by route, transport (http, grpc) and status (HTTP status or gRPC code name).',
      labelNames: ['route', 'transport', 'status'],
      buckets: REQUEST_BUCKETS,
      registers,
    }),
    requests: new Counter({
      name: 'tapedeck_requests_total',
      help: 'Requests answered, by route, transport and status (the same series as the latency histogram counts).',
      labelNames: ['route', 'transport', 'status'],
      registers,
    }),
    deriveLagSeconds: new Gauge({
      name: 'tapedeck_derive_lag_seconds',
      help: 'How long the spans of the last export request waited, from arrival, until their derived steps were committed.',
      registers,
    }),
    payloadOperations: new Counter({
      name: 'tapedeck_payload_store_operations_total',
      help: 'Payload store operations, by backend (fs, pg, s3, memory) and operation (put, get, has, delete).',
      labelNames: ['backend', 'operation'],
      registers,
    }),
    payloadErrors: new Counter({
      name: 'tapedeck_payload_store_errors_total',
      help: 'Payload store operations that failed, by backend and operation.',
      labelNames: ['backend', 'operation'],
      registers,
    }),
  };
}

/**
 * A gauge whose value is read from its source when scraped. A source that fails to answer
 * (the database away) leaves the gauge without a value for that scrape rather than failing it.
 */
export function observeGauge(
  metrics: Metrics,
  definition: { name: string; help: string; labelNames?: readonly string[] },
  read: () => GaugeReading[] | Promise<GaugeReading[]>,
): void {
  new Gauge({
    name: definition.name,
    help: definition.help,
    labelNames: definition.labelNames ?? [],
    registers: [metrics.registry],
    async collect() {
      this.reset();
      let readings: GaugeReading[];
      try {
        readings = await read();
      } catch {
        return;
      }
      for (const r of readings) {
        if (r.labels) this.set(r.labels, r.value);
        else this.set(r.value);
      }
    },
  });
}
