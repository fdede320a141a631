/**
 * @module replay/errors
 * Every refusal on the replay routes is a ReplayError: an HTTP status, a stable `type`, a
 * message, and optional extra fields rendered inside the error object. The body is always
 * {"error": {"type", "message", ...}} with sorted keys.
 */
import { renderJson } from '../json/canonical.js';

export type ReplayErrorType =
  | 'invalid_request' // 400: a body or parameter we cannot use
  | 'unsupported_endpoint' // 400: a route under a base URL that is not replayed
  | 'unauthorized' // 401
  | 'not_found' // 404: unknown or expired replay, unknown run
  | 'replay_refused' // 409 at creation, with a named reason
  | 'replay_divergence' // 409: strict mode, the request is not the recorded one
  | 'response_too_large' // 409: the rendered answer passes the response bound
  | 'tool_unreadable' // 409: tools/next on a step whose value cannot be served
  | 'replay_exhausted' // 410: every model step was served
  | 'tools_exhausted' // 410: no tool step left (with that name)
  | 'request_too_large' // 413
  | 'too_many_replays' // 429: a registry bound, with Retry-After
  | 'internal'; // 500

/** Why creating a replay was refused (409 replay_refused). */
export type RefusalReason =
  | 'answer_not_recorded'
  | 'answer_unreadable'
  | 'prompt_not_messages'
  | 'run_too_long'
  | 'snapshot_too_large';

export class ReplayError extends Error {
  constructor(
    readonly status: number,
    readonly type: ReplayErrorType,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ReplayError';
  }
}

/** A refusal the same request can never get past: tell the SDKs not to retry it. */
export function permanentConflict(
  type: ReplayErrorType,
  message: string,
  extra: Record<string, unknown> = {},
): ReplayError {
  return new ReplayError(409, type, message, extra, { 'x-should-retry': 'false' });
}

export function refusal(reason: RefusalReason, message: string, step?: number): ReplayError {
  const extra: Record<string, unknown> = { reason };
  if (step !== undefined) extra.step = step;
  return permanentConflict('replay_refused', message, extra);
}

export function jsonResponse(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(renderJson(body), {
    status,
    headers: { 'content-type': 'application/json', ...headers },
  });
}

export function errorResponse(err: ReplayError): Response {
  return jsonResponse(err.status, { error: { ...err.extra, type: err.type, message: err.message } }, err.headers);
}
