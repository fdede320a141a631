/**
 * The one error table (src/errors.ts), pinned row by row, and the one HTTP renderer that
 * answers from it: every type's HTTP status, gRPC code, retryability, Retry-After and
 * x-should-retry, the body shape, and the docs' copy of the table.
 */
import { readFileSync } from 'node:fs';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { ApiError, classifyError, errorTable, type ErrorType, GrpcCode, IngestError } from '../../src/errors.js';
import { answerErrorsAsOtlp } from '../../src/http/error-response.js';
import { DatabaseUnavailableError } from '../../src/store/database.js';
import { appWith } from '../helpers/app.js';

// type, HTTP, gRPC, retryable, default Retry-After, x-should-retry: false
const rows: [ErrorType, number, GrpcStatus, boolean, number | null, boolean][] = [
  ['bad_input', 400, GrpcStatus.INVALID_ARGUMENT, false, null, false],
  ['unsupported_media_type', 415, GrpcStatus.INVALID_ARGUMENT, false, null, false],
  ['too_large', 413, GrpcStatus.RESOURCE_EXHAUSTED, false, null, false],
  ['unauthorized', 401, GrpcStatus.UNAUTHENTICATED, false, null, false],
  ['forbidden', 403, GrpcStatus.PERMISSION_DENIED, false, null, false],
  ['not_found', 404, GrpcStatus.NOT_FOUND, false, null, false],
  ['deadline_exceeded', 400, GrpcStatus.DEADLINE_EXCEEDED, false, null, false],
  ['query_too_broad', 400, GrpcStatus.INVALID_ARGUMENT, false, null, false],
  ['unsupported_endpoint', 400, GrpcStatus.UNIMPLEMENTED, false, null, false],
  ['replay_refused', 409, GrpcStatus.FAILED_PRECONDITION, false, null, true],
  ['replay_divergence', 409, GrpcStatus.FAILED_PRECONDITION, false, null, true],
  ['response_too_large', 409, GrpcStatus.FAILED_PRECONDITION, false, null, true],
  ['tool_unreadable', 409, GrpcStatus.FAILED_PRECONDITION, false, null, true],
  ['replay_exhausted', 410, GrpcStatus.OUT_OF_RANGE, false, null, false],
  ['tools_exhausted', 410, GrpcStatus.OUT_OF_RANGE, false, null, false],
  ['upstream_not_configured', 409, GrpcStatus.FAILED_PRECONDITION, false, null, true],
  ['cassette_refused', 409, GrpcStatus.FAILED_PRECONDITION, false, null, true],
  ['replay_erased', 410, GrpcStatus.NOT_FOUND, false, null, false],
  ['busy', 429, GrpcStatus.UNAVAILABLE, true, 1, false],
  ['too_many_replays', 429, GrpcStatus.UNAVAILABLE, true, 60, false],
  ['unavailable', 503, GrpcStatus.UNAVAILABLE, true, 1, false],
  ['upstream_unavailable', 503, GrpcStatus.UNAVAILABLE, true, 5, false],
  ['internal', 500, GrpcStatus.INTERNAL, false, null, false],
];

/** An application with one route that throws what it is given. */
function throwing(error: () => unknown): Hono {
  const routes = new Hono();
  routes.get('/boom', () => {
    throw error();
  });
  return appWith(routes);
}

describe('the error table', () => {
  it('has a row for every type and no other', () => {
    expect(Object.keys(errorTable).sort()).toEqual(rows.map((r) => r[0]).sort());
  });

  it('spells gRPC codes as grpc-js does', () => {
    for (const [name, code] of Object.entries(GrpcCode)) {
      expect([name, code]).toEqual([name, GrpcStatus[name as keyof typeof GrpcStatus]]);
    }
  });

  it('never answers a retryable type with 500 or INTERNAL, and always with Retry-After', () => {
    for (const [type, spec] of Object.entries(errorTable)) {
      if (!spec.retryable) continue;
      expect([type, [429, 503].includes(spec.http), spec.grpc]).toEqual([type, true, GrpcStatus.UNAVAILABLE]);
      expect('retryAfterSeconds' in spec).toBe(true);
    }
  });

  it.each(rows)(
    '%s: HTTP %i, gRPC %i, retryable %s, Retry-After %s, x-should-retry false %s',
    async (type, http, grpc, retryable, retryAfter, sdkNoRetry) => {
      const spec = errorTable[type];
      expect([spec.http, spec.grpc, spec.retryable]).toEqual([http, grpc, retryable]);

      const c = classifyError(new ApiError(type, `a ${type} failure`));
      expect([c.type, c.spec.grpc, c.retryAfterSeconds ?? null]).toEqual([type, grpc, retryAfter]);

      const res = await throwing(() => new ApiError(type, `a ${type} failure`, { extra: { step: 3 } })).request(
        '/boom',
      );
      expect(res.status).toBe(http);
      expect(res.headers.get('content-type')).toBe('application/json');
      expect(res.headers.get('retry-after')).toBe(retryAfter === null ? null : String(retryAfter));
      expect(res.headers.get('x-should-retry')).toBe(sdkNoRetry ? 'false' : null);
      expect(await res.text()).toBe(`{"error":{"message":"a ${type} failure","step":3,"type":"${type}"}}`);
    },
  );
});

describe('the renderer', () => {
  it('keeps a thrower’s Retry-After and extra fields', async () => {
    const res = await throwing(
      () => new ApiError('too_many_replays', 'full', { retryAfterSeconds: 7, extra: { retry_after_seconds: 7 } }),
    ).request('/boom');
    expect([res.status, res.headers.get('retry-after')]).toEqual([429, '7']);
    expect(await res.text()).toBe('{"error":{"message":"full","retry_after_seconds":7,"type":"too_many_replays"}}');
  });

  it('never lets extra fields replace the type or the message', async () => {
    const res = await throwing(() => new ApiError('bad_input', 'real', { extra: { type: 'x', message: 'y' } })).request(
      '/boom',
    );
    expect(await res.text()).toBe('{"error":{"message":"real","type":"bad_input"}}');
  });

  it('answers anything unclassified as 500 internal, without repeating its message', async () => {
    const res = await throwing(() => new Error('password=hunter2 in a stack trace')).request('/boom');
    expect(res.status).toBe(500);
    expect(await res.text()).toBe('{"error":{"message":"internal error; see the server log","type":"internal"}}');
    expect(classifyError('a string').type).toBe('internal');
  });

  it('answers an unreachable database on a read as 503 unavailable with Retry-After, naming no address', async () => {
    const res = await throwing(
      () => new DatabaseUnavailableError('PostgreSQL at 10.0.0.7:5432 is unavailable: connect ECONNREFUSED'),
    ).request('/boom');
    expect([res.status, res.headers.get('retry-after')]).toEqual([503, '1']);
    expect(await res.text()).toBe(
      '{"error":{"message":"the database is unavailable; retry later","type":"unavailable"}}',
    );
  });

  it('answers an unknown route 404 not_found in the same shape', async () => {
    const res = await appWith([]).request('/v1/nope');
    expect(res.status).toBe(404);
    expect(await res.text()).toBe('{"error":{"message":"no such route","type":"not_found"}}');
  });

  it('answers an OTLP/HTTP route with a google.rpc.Status in its encoding, from the same table', async () => {
    const routes = new Hono();
    routes.post('/v1/traces', (c) => {
      answerErrorsAsOtlp(c, 'json');
      throw new IngestError('busy', 'too many export requests in flight');
    });
    const res = await appWith(routes).request('/v1/traces', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
    });
    expect([res.status, res.headers.get('retry-after'), res.headers.get('content-type')]).toEqual([
      429,
      '1',
      'application/json',
    ]);
    expect(await res.text()).toBe('{"code":14,"message":"too many export requests in flight"}');
  });

  it('keeps the kind, message and Retry-After of an IngestError for the OTLP transports', () => {
    const c = classifyError(new IngestError('unavailable', 'the database is unavailable', { retryAfterSeconds: 5 }));
    expect([c.type, c.spec.http, c.spec.grpc, c.message, c.retryAfterSeconds]).toEqual([
      'unavailable',
      503,
      GrpcStatus.UNAVAILABLE,
      'the database is unavailable',
      5,
    ]);
  });
});

describe('the docs', () => {
  it('show every type of the table with its HTTP status, gRPC code and retryability', () => {
    for (const doc of ['docs/api.md', 'docs/ingest.md']) {
      const text = readFileSync(doc, 'utf8');
      const table = new Map<string, string[]>();
      for (const line of text.split('\n')) {
        const cells = line.split('|').map((cell) => cell.trim());
        const type = /^`([a-z_]+)`$/.exec(cells[1] ?? '')?.[1];
        if (type && cells.length >= 7 && /^\d{3}$/.test(cells[2])) table.set(type, cells.slice(2, 5));
      }
      for (const [type, http, grpc, retryable] of rows) {
        if (
          doc === 'docs/ingest.md' &&
          ![
            'bad_input',
            'unsupported_media_type',
            'too_large',
            'unauthorized',
            'forbidden',
            'busy',
            'unavailable',
            'internal',
          ].includes(type)
        )
          continue;
        expect([doc, type, table.get(type)]).toEqual([
          doc,
          type,
          [String(http), `${GrpcStatus[grpc]} (${grpc})`, retryable ? 'yes' : 'no'],
        ]);
      }
    }
  });
});
