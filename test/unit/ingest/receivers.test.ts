/**
 * How both receivers (src/ingest/http-receiver.ts, grpc-receiver.ts) answer when storing
 * fails, without a database: the store is a stand-in whose transaction throws. An
 * unavailable database is retryable on both transports; anything unexpected is a 500 /
 * INTERNAL that tells the sender nothing internal and is logged once, with the error, for
 * the operator. The HTTP routes run in memory (Hono app.request); gRPC on a loopback port.
 */
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { createAdmission } from '../../../src/ingest/admission.js';
import { bindGrpcServer, createGrpcServer } from '../../../src/ingest/grpc-receiver.js';
import { createOtlpHttpRoutes } from '../../../src/ingest/http-receiver.js';
import type { IngestDeps } from '../../../src/ingest/ingest.js';
import { type Database, DatabaseUnavailableError } from '../../../src/store/database.js';
import { appWith } from '../../helpers/app.js';
import { grpcExport, readStatus, traceBody } from '../../helpers/tapedeck-server.js';

function failingStore(error: Error): IngestDeps {
  const db: Database = {
    kind: 'pglite',
    query: async () => [],
    exec: async () => {},
    transaction: async () => {
      throw error;
    },
    ping: async () => {},
    close: async () => {},
  };
  return { db, derive: async () => [] };
}

function recordingLogger() {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

const body = traceBody([{ traceId: '5b8efff798038103d269b633813fc60c', spanId: 'eee19b7ec3c1b174' }], 'protobuf');

const cases = [
  [
    'the database is unavailable',
    new DatabaseUnavailableError('connection refused'),
    {
      http: 503,
      grpc: grpc.status.UNAVAILABLE,
      retryAfter: '5',
      logged: 0,
      message: 'the database is unavailable; nothing from this request was stored, retry later',
    },
  ],
  [
    'storing fails unexpectedly',
    new Error('column "x" does not exist'),
    {
      http: 500,
      grpc: grpc.status.INTERNAL,
      retryAfter: undefined,
      logged: 1,
      message: 'internal error; see the server log',
    },
  ],
] as const;

describe('the OTLP/HTTP receiver', () => {
  it.each(cases)('answers when %s', async (_case, error, expected) => {
    // arrange
    const { logger, lines } = recordingLogger();
    const app = appWith(
      createOtlpHttpRoutes(
        { ingest: failingStore(error), admission: createAdmission(4) },
        { maxBodyBytes: 1 << 20, maxRecordsPerRequest: 1000, bodyTimeoutMs: 10_000 },
      ),
      logger,
    );
    // act
    const res = await app.request('/v1/traces', {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body,
    });
    // assert
    expect(res.status).toBe(expected.http);
    expect(res.headers.get('retry-after') ?? undefined).toBe(expected.retryAfter);
    expect(readStatus(new Uint8Array(await res.arrayBuffer()), 'protobuf')).toEqual({
      code: expected.grpc,
      message: expected.message,
    });
    await new Promise((r) => setImmediate(r));
    expect(lines.filter((l) => l.msg === 'request failed')).toHaveLength(expected.logged);
    if (expected.logged) expect(JSON.stringify(lines)).toContain('column \\"x\\" does not exist');
  });
});

describe('the OTLP/gRPC receiver', () => {
  let server: grpc.Server | undefined;
  afterEach(() => server?.forceShutdown());

  it.each(cases)('answers when %s', async (_case, error, expected) => {
    // arrange
    const { logger, lines } = recordingLogger();
    server = createGrpcServer(
      { ingest: failingStore(error), admission: createAdmission(4), logger },
      { maxBodyBytes: 1 << 20, maxRecordsPerRequest: 1000, maxInflightRequests: 4 },
    );
    const port = await bindGrpcServer(server, '127.0.0.1', 0);
    // act
    const answer = await grpcExport(`127.0.0.1:${port}`, 'traces', body);
    // assert
    expect(answer.code).toBe(expected.grpc);
    expect(answer.details).toBe(expected.message);
    expect(answer.metadata?.get('retry-after')[0]).toBe(expected.retryAfter);
    await new Promise((r) => setImmediate(r));
    expect(lines.filter((l) => l.msg === 'OTLP/gRPC export failed')).toHaveLength(expected.logged);
  });
});
