/**
 * @module http/error-response
 * The one renderer of errors on the HTTP routes, installed as the application's onError:
 * {"error": {"type", "message", ...extra}} with sorted keys, the status from the error
 * table, Retry-After on retryable types and `x-should-retry: false` where the table says.
 * OTLP/HTTP answers the same table in the OTLP wire format instead (ingest/http-receiver.ts).
 */
import type { ErrorHandler } from 'hono';
import { ApiError, classifyError, errorHeaders } from '../errors.js';
import type { Logger } from '../logger.js';
import { DatabaseUnavailableError } from '../store/database.js';
import { jsonResponse } from './json-response.js';

/** The error as the HTTP answer for it. */
export function errorResponse(error: unknown): Response {
  const c = classifyError(asApiError(error));
  return jsonResponse({ error: { ...c.extra, type: c.type, message: c.message } }, c.spec.http, errorHeaders(c));
}

/** The application's onError: renders every error, logging the ones that are not the client's. */
export function createErrorHandler(logger: Logger): ErrorHandler {
  return (error, c) => {
    const known = asApiError(error);
    if (!(known instanceof ApiError)) {
      logger.error({ err: error, method: c.req.method, path: c.req.path }, 'request failed');
    } else if (known.type === 'unavailable') {
      logger.warn({ err: error, method: c.req.method, path: c.req.path }, 'request failed: retryable');
    }
    return errorResponse(known);
  };
}

/**
 * Transient failures from below that do not know about the error table, as the type they
 * answer. The database's own message names its address, so the client gets a plain one.
 */
function asApiError(error: unknown): unknown {
  if (error instanceof DatabaseUnavailableError) {
    return new ApiError('unavailable', 'the database is unavailable; retry later', { cause: error });
  }
  return error;
}
