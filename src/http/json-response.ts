/**
 * @module http/json-response
 * A JSON answer: keys sorted and nanoseconds exact (renderJson, written as bytes), `application/json`.
 */
import { renderJsonBytes } from '../json/canonical.js';

export function jsonResponse(value: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(renderJsonBytes(value), { status, headers: { 'content-type': 'application/json', ...headers } });
}
