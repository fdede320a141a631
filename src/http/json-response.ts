/**
 * @module http/json-response
 * A JSON answer: keys sorted and nanoseconds exact (renderJson), `application/json`.
 */
import { renderJson } from '../json/canonical.js';

export function jsonResponse(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(renderJson(value), { status, headers: { 'content-type': 'application/json', ...headers } });
}
