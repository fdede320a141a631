/**
 * @module errors
 * The error model. Every failure answers one question: will retrying the same data ever
 * succeed? bad_input: no (400 / INVALID_ARGUMENT); too_large: no (413 / RESOURCE_EXHAUSTED);
 * retryable: yes (503 or 429 / UNAVAILABLE, with Retry-After); internal: unknown (500 / INTERNAL).
 */
export type ErrorKind = 'bad_input' | 'unsupported_media_type' | 'too_large' | 'busy' | 'unavailable' | 'internal';

export class IngestError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    options?: { cause?: unknown; retryAfterSeconds?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'IngestError';
    this.retryAfterSeconds = options?.retryAfterSeconds;
  }
  readonly retryAfterSeconds: number | undefined;
}

/** An API error with a stable `type`, rendered as {"error": {"type", "message"}}. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    readonly headers: Record<string, string> = {},
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}
