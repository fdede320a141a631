/**
 * @module payloads/stored-reference
 * Where a stored value may hold a reference tapedeck wrote (docs/architecture.md "Payload
 * store", "Only tapedeck's own references"): offload leaves one in exactly two places, the
 * whole value {"$payload": ref}, or the tail of an llm request [system…, {"$payload": ref}].
 * Readers resolve a reference there and nowhere else, and ingest never leaves user content
 * in either place (it offloads such a value like a large one), so anything shaped like a
 * reference anywhere in a stored value is the user's text and reads back as it was.
 */
import type { JsonValue } from '../json/json-value.js';
import { isPayloadRef } from './payload-store.js';
import { isSystemPrefixedRef } from './system-prefix.js';

export interface StoredReference {
  /** the payload's name, "sha256/<hex>" */
  ref: string;
  /** the system messages kept inline before it; null when the reference is the whole value */
  head: JsonValue[] | null;
}

/** The reference offload left in a stored request or response, if it holds one. */
export function storedReferenceOf(value: JsonValue | null | undefined): StoredReference | null {
  if (value === null || value === undefined || typeof value !== 'object') return null;
  if (isPayloadRef(value)) return { ref: value.$payload, head: null };
  if (Array.isArray(value) && isSystemPrefixedRef(value)) {
    const tail = value[value.length - 1] as { $payload: string };
    return { ref: tail.$payload, head: value.slice(0, -1) };
  }
  return null;
}

/**
 * Whether a value kept inline as it is would read as a reference tapedeck wrote. Such a value
 * is offloaded whatever its size, so its stored form is a real reference to its own text.
 */
export function mistakableForReference(value: JsonValue | null): boolean {
  return storedReferenceOf(value) !== null;
}
