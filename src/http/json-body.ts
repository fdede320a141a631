/**
 * @module http/json-body
 * A request body that must be one JSON object (replay and credential routes): 400
 * `bad_input` naming what is wrong otherwise.
 */
import { ApiError } from '../errors.js';

export function parseJsonObject(text: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError('bad_input', 'malformed JSON in the request body');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw new ApiError('bad_input', 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}
