/**
 * @module errors
 * The error model: one table from every error type any route answers with (OTLP ingest over
 * HTTP and gRPC, the read API, the replay routes) to its HTTP status, gRPC status and
 * retryability. Every failure answers one question: will retrying the same request ever
 * succeed? Retryable types carry Retry-After; nothing transient is a 500 / INTERNAL.
 * Handlers throw an ApiError naming a type; the transports render it from this table
 * (http/error-response.ts for HTTP, ingest/grpc-receiver.ts for gRPC). docs/api.md shows
 * the table; test/unit/errors.test.ts pins it.
 */

/**
 * gRPC status codes (grpc/status.h). Spelled out here rather than imported from
 * @grpc/grpc-js so that modules far from the gRPC transport do not load it; the table test
 * checks them against grpc-js.
 */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode];

export interface ErrorSpec {
  http: number;
  grpc: GrpcCode;
  /** whether the same request may succeed later; retryable answers carry Retry-After */
  retryable: boolean;
  /** Retry-After when the thrower gives none (retryable types only) */
  retryAfterSeconds?: number;
  /**
   * `x-should-retry: false`: the OpenAI and Anthropic SDKs retry a 409 by default; these
   * refusals can never pass with the same request, so the header tells them not to.
   */
  sdkNoRetry?: true;
}

const permanentConflict = {
  http: 409,
  grpc: GrpcCode.FAILED_PRECONDITION,
  retryable: false,
  sdkNoRetry: true,
} as const satisfies ErrorSpec;

/** Every error type, one vocabulary for every route. */
export const errorTable = {
  // The request itself is wrong: a body, parameter or header that cannot be used.
  bad_input: { http: 400, grpc: GrpcCode.INVALID_ARGUMENT, retryable: false },
  unsupported_media_type: { http: 415, grpc: GrpcCode.INVALID_ARGUMENT, retryable: false },
  // Over a size bound: the same bytes will never fit (OTLP: 413 / RESOURCE_EXHAUSTED without RetryInfo).
  too_large: { http: 413, grpc: GrpcCode.RESOURCE_EXHAUSTED, retryable: false },
  unauthorized: { http: 401, grpc: GrpcCode.UNAUTHENTICATED, retryable: false },
  // A valid credential whose role does not allow this (docs/security.md).
  forbidden: { http: 403, grpc: GrpcCode.PERMISSION_DENIED, retryable: false },
  not_found: { http: 404, grpc: GrpcCode.NOT_FOUND, retryable: false },
  // A read that does not fit its --query-deadline-ms budget: the same request against the
  // same data will not get cheaper, so it is not retryable.
  deadline_exceeded: { http: 400, grpc: GrpcCode.DEADLINE_EXCEEDED, retryable: false },
  query_too_broad: { http: 400, grpc: GrpcCode.INVALID_ARGUMENT, retryable: false },
  // Replay routes.
  unsupported_endpoint: { http: 400, grpc: GrpcCode.UNIMPLEMENTED, retryable: false },
  replay_refused: permanentConflict,
  replay_divergence: permanentConflict,
  response_too_large: permanentConflict,
  tool_unreadable: permanentConflict,
  // Forks: a live call with no upstream for its wire is refused, never sent anywhere.
  upstream_not_configured: permanentConflict,
  replay_exhausted: { http: 410, grpc: GrpcCode.OUT_OF_RANGE, retryable: false },
  tools_exhausted: { http: 410, grpc: GrpcCode.OUT_OF_RANGE, retryable: false },
  // Cassettes: a run that cannot be exported whole (too long, an unreadable payload, over the
  // size policy); the same request will not succeed until the run changes.
  cassette_refused: permanentConflict,
  // A replay withdrawn by an erasure: it answers this until it would have expired.
  replay_erased: { http: 410, grpc: GrpcCode.NOT_FOUND, retryable: false },
  // Transient: come back later.
  busy: { http: 429, grpc: GrpcCode.UNAVAILABLE, retryable: true, retryAfterSeconds: 1 },
  too_many_replays: { http: 429, grpc: GrpcCode.UNAVAILABLE, retryable: true, retryAfterSeconds: 60 },
  unavailable: { http: 503, grpc: GrpcCode.UNAVAILABLE, retryable: true, retryAfterSeconds: 1 },
  upstream_unavailable: { http: 503, grpc: GrpcCode.UNAVAILABLE, retryable: true, retryAfterSeconds: 5 },
  // A fault of ours nobody classified: logged, and told to the client as nothing more.
  internal: { http: 500, grpc: GrpcCode.INTERNAL, retryable: false },
} as const satisfies Record<string, ErrorSpec>;

export type ErrorType = keyof typeof errorTable;

export interface ApiErrorOptions {
  cause?: unknown;
  /** Retry-After in seconds; only retryable types send it (default: the table's) */
  retryAfterSeconds?: number;
  /** more fields rendered inside the error object, e.g. a replay refusal's `reason` */
  extra?: Record<string, unknown>;
}

/** A failure with a stable type, rendered as {"error": {"type", "message", ...extra}}. */
export class ApiError extends Error {
  readonly retryAfterSeconds: number | undefined;
  readonly extra: Readonly<Record<string, unknown>>;

  constructor(
    readonly type: ErrorType,
    message: string,
    options: ApiErrorOptions = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.extra = options.extra ?? {};
  }

  /** the HTTP status of this type */
  get status(): number {
    return errorTable[this.type].http;
  }
}

/** A failure on the ingest path; `kind` is its type. */
export class IngestError extends ApiError {
  constructor(kind: ErrorType, message: string, options?: { cause?: unknown; retryAfterSeconds?: number }) {
    super(kind, message, options);
    this.name = 'IngestError';
  }

  get kind(): ErrorType {
    return this.type;
  }
}

export interface ClassifiedError {
  type: ErrorType;
  spec: ErrorSpec;
  message: string;
  /** set exactly when the type is retryable */
  retryAfterSeconds: number | undefined;
  extra: Readonly<Record<string, unknown>>;
}

/** The HTTP headers the table adds to an error answer. */
export function errorHeaders(c: ClassifiedError): Record<string, string> {
  const headers: Record<string, string> = {};
  if (c.retryAfterSeconds !== undefined) headers['retry-after'] = String(c.retryAfterSeconds);
  if (c.spec.sdkNoRetry) headers['x-should-retry'] = 'false';
  return headers;
}

export const INTERNAL_MESSAGE = 'internal error; see the server log';

/**
 * What a transport answers for `error`. Anything that is not an ApiError is internal, and
 * its message (which may hold secrets or paths) is not repeated to the client.
 */
export function classifyError(error: unknown): ClassifiedError {
  if (error instanceof ApiError) {
    const spec: ErrorSpec = errorTable[error.type];
    return {
      type: error.type,
      spec,
      message: error.message,
      retryAfterSeconds: spec.retryable ? (error.retryAfterSeconds ?? spec.retryAfterSeconds ?? 1) : undefined,
      extra: error.extra,
    };
  }
  return {
    type: 'internal',
    spec: errorTable.internal,
    message: INTERNAL_MESSAGE,
    retryAfterSeconds: undefined,
    extra: {},
  };
}
