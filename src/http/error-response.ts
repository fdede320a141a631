/**
 * @module http/error-response
 * The one renderer of errors on the HTTP routes, installed as the application's onError:
 * the status from the error table (errors.ts), Retry-After on retryable types and
 * `x-should-retry: false` where the table says, and the body
 * {"error": {"type", "message", ...extra}} with sorted keys; on the OTLP/HTTP routes, which
 * OTLP exporters read, a google.rpc.Status {code, message} in the request's encoding.
 */
import type { Context, ErrorHandler } from 'hono';
import { ApiError, classifyError, errorHeaders } from '../errors.js';
import type { Logger } from '../logger.js';
import type { OtlpEncoding } from '../otlp/decode.js';
import { encodeStatus, otlpContentType } from '../otlp/response.js';
import { PayloadStoreUnavailableError } from '../payloads/payload-store.js';
import { DatabaseUnavailableError } from '../store/database.js';
import { jsonResponse } from './json-response.js';

declare module 'hono' {
  interface ContextVariableMap {
    otlpErrors: OtlpEncoding;
    /** set for every request by api/app.ts (hono/request-id) */
    requestId: string;
  }
}

/** This request's errors are answered as an OTLP google.rpc.Status in this encoding. */
export function answerErrorsAsOtlp(c: Context, encoding: OtlpEncoding): void {
  c.set('otlpErrors', encoding);
}

/** The error as the HTTP answer for it: JSON, or a Status in the given OTLP encoding. */
export function errorResponse(error: unknown, otlp?: OtlpEncoding): Response {
  const c = classifyError(asApiError(error));
  if (otlp === undefined) {
    return jsonResponse({ error: { ...c.extra, type: c.type, message: c.message } }, c.spec.http, errorHeaders(c));
  }
  return new Response(encodeStatus(otlp, c.spec.grpc, c.message), {
    status: c.spec.http,
    headers: { ...errorHeaders(c), 'content-type': otlpContentType(otlp) },
  });
}

/** The application's onError: renders every error, logging the ones that are not the client's. */
export function createErrorHandler(logger: Logger): ErrorHandler {
  return (error, c) => {
    const known = asApiError(error);
    const request = { requestId: c.get('requestId'), method: c.req.method, path: c.req.path };
    if (!(known instanceof ApiError)) {
      logger.error({ err: error, ...request }, 'request failed');
    } else if (known.type === 'unavailable') {
      logger.warn({ err: error, ...request }, 'request failed: retryable');
    }
    return errorResponse(known, c.get('otlpErrors'));
  };
}

/**
 * Transient failures from below that do not know about the error table, as the type they
 * answer. Their own messages name addresses and paths, so the client gets a plain one.
 */
function asApiError(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError) {
    return new ApiError('unavailable', 'the database is unavailable; retry later', { cause: error });
  }
  if (error instanceof PayloadStoreUnavailableError) {
    return new ApiError('unavailable', 'the payload store is unavailable; retry later', { cause: error });
  }
  return error;
}
