/**
 * @module json/json-value
 * A JSON value as JSON.parse returns it, and the stored form of one (a text or jsonb column
 * read as text) parsed back.
 */

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** A stored request or response (steps.request, steps.response: JSON text) as its value. */
export function storedJson(text: string | null): JsonValue | null {
  return text === null ? null : (JSON.parse(text) as JsonValue);
}
