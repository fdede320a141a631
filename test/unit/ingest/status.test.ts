/**
 * The one table from error kind to each transport's answer (src/ingest/status.ts), pinned
 * row by row: will retrying the same data succeed? (OTLP spec, "Failures".)
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { IngestError, type ErrorKind } from '../../../src/errors.js';
import { classifyError, statusTable } from '../../../src/ingest/status.js';

describe('the status table', () => {
  it.each([
    ['bad_input', 400, GrpcStatus.INVALID_ARGUMENT, false],
    ['unsupported_media_type', 415, GrpcStatus.INVALID_ARGUMENT, false],
    ['too_large', 413, GrpcStatus.RESOURCE_EXHAUSTED, false],
    ['busy', 429, GrpcStatus.UNAVAILABLE, true],
    ['unavailable', 503, GrpcStatus.UNAVAILABLE, true],
    ['internal', 500, GrpcStatus.INTERNAL, false],
  ] as const)('answers %s with HTTP %i, gRPC code %i, retryable %s', (kind, http, grpc, retryable) => {
    expect(statusTable[kind]).toEqual({ http, grpc, retryable });
  });

  it('has a row for every error kind and no other', () => {
    const kinds: ErrorKind[] = ['bad_input', 'unsupported_media_type', 'too_large', 'busy', 'unavailable', 'internal'];
    expect(Object.keys(statusTable).sort()).toEqual([...kinds].sort());
  });
});

describe('classifyError', () => {
  it('keeps the kind, message and Retry-After of an IngestError', () => {
    const error = new IngestError('unavailable', 'the database is unavailable', { retryAfterSeconds: 5 });
    expect(classifyError(error)).toEqual({
      kind: 'unavailable',
      status: statusTable.unavailable,
      message: 'the database is unavailable',
      retryAfterSeconds: 5,
    });
  });

  it('answers anything unclassified as internal, without repeating its message to the sender', () => {
    const c = classifyError(new Error('password=hunter2 in a stack trace'));
    expect(c.kind).toBe('internal');
    expect(c.status.http).toBe(500);
    expect(c.message).toBe('internal error while storing the request; see the server log');
    expect(c.retryAfterSeconds).toBeUndefined();
    expect(classifyError('a string').kind).toBe('internal');
  });
});
