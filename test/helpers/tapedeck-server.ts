/**
 * Test helper: a running tapedeck (HTTP and gRPC listeners on free ports) over a fresh test
 * database of one kind, plus the small clients the ingest tests talk to it with: a raw
 * OTLP/HTTP POST, a raw-bytes OTLP/gRPC call, response decoders, and readers for the public
 * views. The server is the real one (src/server.ts), only its database and payload store are
 * handed in, so what these tests see is what `tapedeck serve` does.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { defaultConfig, type Config } from '../../src/config.js';
import { type Logger, silentLogger } from '../../src/logger.js';
import type { PayloadStore } from '../../src/payloads/payload-store.js';
import { LOGS_EXPORT_PATH, TRACE_EXPORT_PATH, otlpTypes } from '../../src/otlp/proto.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { startTapedeck, type RunningTapedeck } from '../../src/server.js';
import type { Database } from '../../src/store/database.js';
import { createPgDatabase, type PgDatabaseSettings } from '../../src/store/pg-database.js';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { createServerDatabase, type DatabaseKind } from './databases.js';

export interface TestTapedeck {
  kind: DatabaseKind;
  /** base URL of the HTTP listener, e.g. http://127.0.0.1:40123 (POST `${url}/v1/traces`) */
  url: string;
  /** the gRPC listener as an OTLP exporter URL, e.g. http://127.0.0.1:40124 */
  grpcUrl: string;
  /** the gRPC listener as a grpc-js address, e.g. 127.0.0.1:40124 */
  grpcAddress: string;
  /** the database tapedeck writes to (through any wrapper the test asked for) */
  db: Database;
  /** postgres only: the fresh database's own URL, for a second, independent connection */
  databaseUrl?: string;
  running: RunningTapedeck;
  /** the data directory it was started with (removed when it closes) */
  dataDir: string;
  close(): Promise<void>;
}

export interface TestTapedeckOptions {
  /** postgres only: the URL tapedeck connects with, given the database's (a TCP proxy, say) */
  connectVia?: (databaseUrl: string) => string;
  /** wraps the database tapedeck is given (to delay commits, count transactions, ...) */
  wrapDb?: (db: Database) => Database;
  /** postgres only: settings of tapedeck's pool (a short query timeout, say) */
  pgSettings?: PgDatabaseSettings;
  /** false: ingest derives on the main thread only (src/derive/derive-thread.ts) */
  deriveWorker?: boolean;
  /** the payload store (default: in memory); 'config': the one config selects (--payload-store) */
  payloads?: PayloadStore | 'config';
  /** the logger tapedeck logs to (default: silent) */
  logger?: Logger;
  /** milliseconds between retention passes (with a retention bound configured) */
  retentionIntervalMs?: number;
}

/** Starts tapedeck on free loopback ports over a fresh, empty database of this kind. */
export async function startTestTapedeck(
  kind: DatabaseKind,
  overrides: Partial<Config> = {},
  options: TestTapedeckOptions = {},
): Promise<TestTapedeck> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-test-'));
  let db: Database;
  let databaseUrl: string | undefined;
  let dropServerDatabase: (() => Promise<void>) | undefined;
  if (kind === 'pglite') {
    db = await createPgliteDatabase();
  } else {
    const created = await createServerDatabase();
    databaseUrl = created.url;
    dropServerDatabase = created.drop;
    db = createPgDatabase(options.connectVia ? options.connectVia(created.url) : created.url, {
      maxConnections: 4,
      connectionTimeoutMillis: 2_000,
      ...options.pgSettings,
    });
  }
  if (options.wrapDb) db = options.wrapDb(db);
  const config: Config = {
    ...defaultConfig,
    host: '127.0.0.1',
    httpPort: 0,
    grpcPort: 0,
    dataDir,
    shutdownGraceMs: 5_000,
    ...overrides,
  };
  let running: RunningTapedeck;
  try {
    running = await startTapedeck(config, options.logger ?? silentLogger(), {
      db,
      payloads: options.payloads === 'config' ? undefined : (options.payloads ?? createMemoryPayloadStore()),
      deriveWorker: options.deriveWorker,
      retentionIntervalMs: options.retentionIntervalMs,
    });
  } catch (error) {
    await dropServerDatabase?.().catch(() => {});
    rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
  let closed: Promise<void> | undefined;
  return {
    kind,
    url: `http://127.0.0.1:${running.httpPort}`,
    grpcUrl: `http://127.0.0.1:${running.grpcPort}`,
    grpcAddress: `127.0.0.1:${running.grpcPort}`,
    db,
    databaseUrl,
    running,
    dataDir,
    close() {
      closed ??= (async () => {
        await running.close(); // closes the database too
        await dropServerDatabase?.();
        rmSync(dataDir, { recursive: true, force: true });
      })();
      return closed;
    },
  };
}

/** The database as given, counting the transactions opened through it. */
export function countingTransactions(db: Database): { db: Database; count: { transactions: number } } {
  const count = { transactions: 0 };
  const counted = new Proxy(db, {
    get(target, key, receiver) {
      if (key === 'transaction') count.transactions++;
      const value = Reflect.get(target, key, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { db: counted, count };
}

// ---------------------------------------------------------------------------------------
// Talking to it

export interface HttpAnswer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

/**
 * POSTs raw bytes with exactly the headers given (fetch would add its own Content-Type and
 * refuse some Content-Encodings). `agent: false`: one connection per request, so a test's
 * leftover keep-alive socket never delays a server's close.
 */
export function postRaw(
  url: string,
  body: Uint8Array | string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return new Promise((resolve, reject) => {
    const bytes =
      typeof body === 'string' ? Buffer.from(body) : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { 'content-length': String(bytes.length), ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
}

export type OtlpSignal = 'traces' | 'logs';
export const PROTOBUF = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

/** POST an OTLP body to /v1/traces or /v1/logs. */
export function postOtlp(
  t: Pick<TestTapedeck, 'url'>,
  signal: OtlpSignal,
  body: Uint8Array | string,
  contentType: string,
  headers: Record<string, string> = {},
): Promise<HttpAnswer> {
  return postRaw(`${t.url}/v1/${signal}`, body, { 'content-type': contentType, ...headers });
}

export interface GrpcAnswer {
  /** grpc.status.OK on success */
  code: grpc.status;
  details: string;
  /** the Export*ServiceResponse bytes on success */
  response?: Buffer;
  metadata?: grpc.Metadata;
}

const passThrough = (b: Buffer) => b;

/**
 * One unary Export call with a raw protobuf request body (no framing: grpc-js adds it).
 * `gzip` compresses the message (grpc-encoding: gzip).
 */
export async function grpcExport(
  address: string,
  signal: OtlpSignal,
  body: Uint8Array,
  options: { gzip?: boolean } = {},
): Promise<GrpcAnswer> {
  const channelOptions: grpc.ChannelOptions = options.gzip
    ? { 'grpc.default_compression_algorithm': grpc.compressionAlgorithms.gzip }
    : {};
  const client = new grpc.Client(address, grpc.credentials.createInsecure(), channelOptions);
  try {
    return await new Promise<GrpcAnswer>((resolve) => {
      client.makeUnaryRequest<Buffer, Buffer>(
        signal === 'traces' ? TRACE_EXPORT_PATH : LOGS_EXPORT_PATH,
        passThrough,
        passThrough,
        Buffer.from(body),
        new grpc.Metadata(),
        { deadline: Date.now() + 30_000 },
        (error, response) => {
          if (error) resolve({ code: error.code, details: error.details, metadata: error.metadata });
          else resolve({ code: grpc.status.OK, details: '', response });
        },
      );
    });
  } finally {
    client.close();
  }
}

// ---------------------------------------------------------------------------------------
// Reading answers

export interface PartialSuccessRead {
  rejected: number;
  errorMessage: string;
}

/** An Export*ServiceResponse body → its partial_success (rejected 0, '' when absent). */
export function readExportResponse(
  signal: OtlpSignal,
  body: Uint8Array,
  encoding: 'protobuf' | 'json',
): PartialSuccessRead {
  const countKey = signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords';
  let partial: Record<string, unknown> | undefined;
  if (encoding === 'json') {
    partial = (JSON.parse(Buffer.from(body).toString('utf8')) as { partialSuccess?: Record<string, unknown> })
      .partialSuccess;
  } else {
    const types = otlpTypes();
    const type = signal === 'traces' ? types.ExportTraceServiceResponse : types.ExportLogsServiceResponse;
    const object = type.toObject(type.decode(body), { longs: String }) as { partialSuccess?: Record<string, unknown> };
    partial = object.partialSuccess;
  }
  return { rejected: Number(partial?.[countKey] ?? 0), errorMessage: String(partial?.errorMessage ?? '') };
}

/** A google.rpc.Status error body → {code, message}. */
export function readStatus(body: Uint8Array, encoding: 'protobuf' | 'json'): { code: number; message: string } {
  if (encoding === 'json') return JSON.parse(Buffer.from(body).toString('utf8')) as { code: number; message: string };
  const { Status } = otlpTypes();
  const object = Status.toObject(Status.decode(body)) as { code?: number; message?: string };
  return { code: object.code ?? 0, message: object.message ?? '' };
}

// ---------------------------------------------------------------------------------------
// Reading what was stored

export type SpanRow = Record<string, unknown>;

/** Rows of the public view tapedeck.spans, optionally only these traces, in a stable order. */
export async function readSpanRows(db: Database, traceIds?: readonly string[]): Promise<SpanRow[]> {
  const where = traceIds ? 'WHERE trace_id = ANY($1::text[])' : '';
  return db.query(
    `SELECT * FROM tapedeck.spans ${where} ORDER BY trace_id, start_ns, name, span_id`,
    traceIds ? [traceIds] : [],
  );
}

/** Rows of tapedeck.logs for these traces, in a stable order. */
export async function readLogRows(db: Database, traceIds: readonly string[]): Promise<SpanRow[]> {
  return db.query('SELECT * FROM tapedeck.logs WHERE trace_id = ANY($1::text[]) ORDER BY trace_id, span_id, time_ns', [
    traceIds,
  ]);
}

export interface RowCounts {
  spans: number;
  logs: number;
  steps: number;
}

/** How many rows each stored table holds: "nothing else changed" is these, before and after. */
export async function countRows(db: Database): Promise<RowCounts> {
  const [row] = await db.query<{ spans: bigint; logs: bigint; steps: bigint }>(
    `SELECT (SELECT count(*) FROM tapedeck_store.spans) AS spans,
            (SELECT count(*) FROM tapedeck_store.logs) AS logs,
            (SELECT count(*) FROM tapedeck_store.steps) AS steps`,
  );
  return { spans: Number(row.spans), logs: Number(row.logs), steps: Number(row.steps) };
}

// ---------------------------------------------------------------------------------------
// Building requests

export interface TestSpan {
  traceId: string;
  spanId: string;
  name?: string;
  parentSpanId?: string;
  attributes?: Record<string, string>;
}

/**
 * An ExportTraceServiceRequest holding these spans (one resource, one scope), in either
 * encoding: protobuf through our .proto types, JSON in the OTLP/JSON mapping (hex ids,
 * times as decimal strings). Ids are passed through as given, so a test can send bad ones.
 */
export function traceBody(spans: readonly TestSpan[], encoding: 'protobuf' | 'json'): Uint8Array {
  const attrs = (a: Record<string, string> = {}) =>
    Object.entries(a).map(([key, v]) => ({ key, value: { stringValue: v } }));
  const span = (s: TestSpan, i: number) => ({
    traceId: encoding === 'json' ? s.traceId : Buffer.from(s.traceId, 'hex'),
    spanId: encoding === 'json' ? s.spanId : Buffer.from(s.spanId, 'hex'),
    ...(s.parentSpanId
      ? { parentSpanId: encoding === 'json' ? s.parentSpanId : Buffer.from(s.parentSpanId, 'hex') }
      : {}),
    name: s.name ?? `span-${i}`,
    kind: 1,
    startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) * 1_000n),
    endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) * 1_000n + 500n),
    attributes: attrs(s.attributes),
  });
  const request = {
    resourceSpans: [
      {
        resource: { attributes: attrs({ 'service.name': 'ingest-test' }) },
        scopeSpans: [{ scope: { name: 'ingest-test', version: '1' }, spans: spans.map(span) }],
      },
    ],
  };
  if (encoding === 'json') return Buffer.from(JSON.stringify(request));
  const { ExportTraceServiceRequest: R } = otlpTypes();
  return R.encode(R.fromObject(request)).finish();
}

/** Random, valid ids (tests keep their rows apart by trace id). */
export function randomTraceId(): string {
  return randomBytes(16).toString('hex');
}
export function randomSpanId(): string {
  return randomBytes(8).toString('hex');
}

/**
 * Timeout for a beforeAll that starts tapedeck: a worker's first PGlite compiles its WASM,
 * which takes tens of seconds on a busy 2-core machine (about one on an idle one).
 */
export const START_TIMEOUT_MS = 120_000;

/** A logger whose lines (parsed) land in `lines`, for tests that count what was logged. */
export function capturingLogger(): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}
