/**
 * GET /metrics, scraped the way Prometheus does and read by a Prometheus text-format parser
 * (parse-prometheus-text-format, not prom-client's own registry), while the test drives real
 * traffic: captured OTLP exports over HTTP and gRPC, a redelivery, a request with an unusable
 * span, log records, a payload store that fails and then works, a replay, and requests held
 * waiting for their turn. Every metric docs/metrics.md lists must be there and move.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import parsePrometheusTextFormat, { type ParsedFamily } from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/databases.js';
import {
  capturingLogger,
  grpcExport,
  postOtlp,
  postRaw,
  PROTOBUF,
  randomSpanId,
  randomTraceId,
  readExportResponse,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
  traceBody,
} from '../helpers/tapedeck-server.js';

const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'corpus');
const fixture = (...parts: string[]) => readFileSync(path.join(CORPUS, ...parts));
const BIG = ['001', '002', '003'].map((n) => fixture('openllmetry-openai', 'big-prompt', `${n}-traces.pb`));
const BIG_RUN = 'sess-openllmetry-openai-big-prompt';
const WEATHER_GRPC = fixture('otel-genai-openai', 'weather', '003-traces.grpc.pb');
const WEATHER_LOGS = fixture('otel-genai-openai', 'weather', '004-logs.pb');

type Scrape = Map<string, ParsedFamily>;

async function scrape(t: TestTapedeck): Promise<Scrape> {
  const response = await fetch(`${t.url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return new Map(parsePrometheusTextFormat(await response.text()).map((f) => [f.name, f]));
}

/** The value of one sample (a histogram's count), 0 when the series is not there yet. */
function sampleOf(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const family = s.get(name);
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([key, value]) => m.labels?.[key] === value));
  if (!sample) return 0;
  return Number(sample.value ?? sample.count);
}

/** Starts an OTLP/HTTP export whose body arrives only when finish() is called. */
function slowExport(t: TestTapedeck, body: Uint8Array): { finish(): Promise<number> } {
  const pending: (() => void)[] = [];
  const answered = new Promise<number>((resolve, reject) => {
    const req = http.request(
      `${t.url}/v1/traces`,
      { method: 'POST', agent: false, headers: { 'content-type': PROTOBUF, 'transfer-encoding': 'chunked' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.write(body.subarray(0, 10));
    pending.push(() => req.end(body.subarray(10)));
  });
  return {
    finish() {
      for (const end of pending) end();
      return answered;
    },
  };
}

describe.each(databaseKinds)('GET /metrics (%s)', (kind) => {
  let t: TestTapedeck;
  const { logger, lines } = capturingLogger();
  beforeAll(async () => {
    // The payload store the configuration selects (the filesystem under the data directory),
    // so it can be broken and mended for real.
    t = await startTestTapedeck(kind, {}, { payloads: 'config', logger });
  }, START_TIMEOUT_MS);
  afterAll(async () => t?.close());

  it('reports every listed metric, and each moves as traffic is driven', async () => {
    const before = await scrape(t);

    // A payload store that cannot write: the big prompt's export is refused, retryably.
    const payloadDir = path.join(t.dataDir, 'payloads');
    writeFileSync(payloadDir, 'a file where the payload directory should be');
    const refused = await postOtlp(t, 'traces', BIG[1], PROTOBUF, { 'x-request-id': 'scrape-test-1' });
    expect(refused.status).toBe(503);
    expect(refused.headers['x-request-id']).toBe('scrape-test-1');
    expect(lines.some((l) => l.requestId === 'scrape-test-1' && l.level === 40)).toBe(true);
    rmSync(payloadDir);

    // The run, stored; then the big export again (a redelivery: stored once).
    for (const body of BIG) expect((await postOtlp(t, 'traces', body, PROTOBUF)).status).toBe(200);
    expect((await postOtlp(t, 'traces', BIG[1], PROTOBUF)).status).toBe(200);
    // One usable span, one with a span id of the wrong length (partial success).
    const traceId = randomTraceId();
    const partial = await postOtlp(
      t,
      'traces',
      traceBody(
        [
          { traceId, spanId: randomSpanId() },
          { traceId, spanId: 'abcd' },
        ],
        'protobuf',
      ),
      PROTOBUF,
    );
    expect(readExportResponse('traces', partial.body, 'protobuf').rejected).toBe(1);
    // Log records, twice; spans over gRPC.
    for (let i = 0; i < 2; i++) expect((await postOtlp(t, 'logs', WEATHER_LOGS, PROTOBUF)).status).toBe(200);
    expect((await grpcExport(t.grpcAddress, 'traces', WEATHER_GRPC)).code).toBe(0);
    // A replay of the stored run.
    const created = await postRaw(`${t.url}/v1/replays`, JSON.stringify({ run: BIG_RUN }), {
      'content-type': 'application/json',
    });
    expect(created.status).toBe(201);

    // Requests of unknown size take three of the four work units each: one works, two wait.
    const held = [0, 1, 2].map(() =>
      slowExport(t, traceBody([{ traceId: randomTraceId(), spanId: randomSpanId() }], 'protobuf')),
    );
    let during = await scrape(t);
    for (let i = 0; i < 50 && sampleOf(during, 'tapedeck_work_units', { state: 'waiting' }) === 0; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      during = await scrape(t);
    }
    expect(sampleOf(during, 'tapedeck_work_units', { state: 'in_use' })).toBe(3);
    expect(sampleOf(during, 'tapedeck_work_units', { state: 'waiting' })).toBe(6);
    for (const h of held) expect(await h.finish()).toBe(200);

    const after = await scrape(t);
    const moved = (name: string, labels?: Record<string, string>) =>
      sampleOf(after, name, labels) - sampleOf(before, name, labels);

    // spans: the big run's 3 + its redelivered 1 + 1 usable + 4 over gRPC + 3 held
    const bigSpans = 3;
    expect(moved('tapedeck_spans_accepted_total')).toBeGreaterThanOrEqual(bigSpans + 1 + 1 + 3);
    expect(moved('tapedeck_spans_deduplicated_total')).toBeGreaterThanOrEqual(1);
    expect(moved('tapedeck_spans_rejected_total', { reason: 'invalid_record' })).toBe(1);
    expect(moved('tapedeck_spans_rejected_total', { reason: 'unavailable' })).toBeGreaterThanOrEqual(1);
    expect(moved('tapedeck_log_records_accepted_total')).toBeGreaterThan(0);
    expect(moved('tapedeck_log_records_deduplicated_total')).toBe(moved('tapedeck_log_records_accepted_total') / 2);
    expect(after.get('tapedeck_log_records_rejected_total')?.type).toBe('COUNTER');

    // The parser folds a labelled histogram's series into one set of buckets, the last series'
    // (it keeps no labels, counts or sums for them): the histogram is checked for its type and
    // buckets, and per-series counts are read from tapedeck_requests_total, which counts the
    // same observations under the same labels.
    const histogram = after.get('tapedeck_request_duration_seconds');
    expect(histogram?.type).toBe('HISTOGRAM');
    expect(Object.keys(histogram?.metrics[0]?.buckets ?? {})).toContain('+Inf');
    expect(Number(histogram?.metrics[0]?.buckets?.['+Inf'])).toBeGreaterThan(0);
    const http200 = { route: '/v1/traces', transport: 'http', status: '200' };
    expect(moved('tapedeck_requests_total', http200)).toBeGreaterThanOrEqual(BIG.length + 1 + 1 + 3);
    expect(moved('tapedeck_requests_total', { ...http200, status: '503' })).toBe(1);
    expect(moved('tapedeck_requests_total', { route: '/v1/logs', transport: 'http', status: '200' })).toBe(2);
    expect(moved('tapedeck_requests_total', { route: '/v1/replays', transport: 'http', status: '201' })).toBe(1);
    const grpcOk = { transport: 'grpc', status: 'OK' };
    expect(moved('tapedeck_requests_total', grpcOk)).toBe(1);

    expect(sampleOf(after, 'tapedeck_work_units', { state: 'in_use' })).toBe(0);
    expect(sampleOf(after, 'tapedeck_derive_lag_seconds')).toBeGreaterThan(0);

    const fsPut = { backend: 'fs', operation: 'put' };
    expect(moved('tapedeck_payload_store_operations_total', fsPut)).toBeGreaterThanOrEqual(2);
    expect(moved('tapedeck_payload_store_errors_total', fsPut)).toBe(1);
    expect(moved('tapedeck_payload_store_operations_total', { backend: 'fs', operation: 'get' })).toBeGreaterThan(0);

    expect(moved('tapedeck_replays')).toBe(1);
    expect(moved('tapedeck_replay_bytes')).toBeGreaterThan(0);

    if (kind === 'postgres') {
      expect(sampleOf(after, 'tapedeck_db_pool_connections', { state: 'max' })).toBe(4);
      expect(sampleOf(after, 'tapedeck_db_pool_connections', { state: 'open' })).toBeGreaterThan(0);
    } else {
      expect(after.has('tapedeck_db_pool_connections')).toBe(false); // PGlite has no pool
    }

    // the default Node process metrics
    expect(moved('process_cpu_seconds_total')).toBeGreaterThan(0);
    expect(sampleOf(after, 'nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect(after.has('nodejs_eventloop_lag_seconds')).toBe(true);
  });
});
