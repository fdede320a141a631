/**
 * @module ingest/status
 * One table from error kind to the answer each transport gives. The question it encodes:
 * will retrying the same data succeed? (OTLP spec, "Failures"; gRPC status codes.)
 * Anything unclassified is an internal error: 500 / INTERNAL.
 */
import { status as GrpcStatus } from '@grpc/grpc-js';
import { type ErrorKind, IngestError } from '../errors.js';

export interface WireStatus {
  http: number;
  grpc: GrpcStatus;
  retryable: boolean;
}

export const statusTable: Readonly<Record<ErrorKind, WireStatus>> = {
  bad_input: { http: 400, grpc: GrpcStatus.INVALID_ARGUMENT, retryable: false },
  unsupported_media_type: { http: 415, grpc: GrpcStatus.INVALID_ARGUMENT, retryable: false },
  // Over the size bound: the same bytes will never fit (spec: 413 / RESOURCE_EXHAUSTED without RetryInfo).
  too_large: { http: 413, grpc: GrpcStatus.RESOURCE_EXHAUSTED, retryable: false },
  // Too many requests in flight: come back shortly.
  busy: { http: 429, grpc: GrpcStatus.UNAVAILABLE, retryable: true },
  unavailable: { http: 503, grpc: GrpcStatus.UNAVAILABLE, retryable: true },
  internal: { http: 500, grpc: GrpcStatus.INTERNAL, retryable: false },
};

export interface ClassifiedError {
  kind: ErrorKind;
  status: WireStatus;
  message: string;
  retryAfterSeconds: number | undefined;
}

export function classifyError(error: unknown): ClassifiedError {
  if (error instanceof IngestError) {
    return {
      kind: error.kind,
      status: statusTable[error.kind],
      message: error.message,
      retryAfterSeconds: error.retryAfterSeconds,
    };
  }
  return {
    kind: 'internal',
    status: statusTable.internal,
    message: 'internal error while storing the request; see the server log',
    retryAfterSeconds: undefined,
  };
}
