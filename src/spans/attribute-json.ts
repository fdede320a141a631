/**
 * @module spans/attribute-json
 * Attribute values → JSON for jsonb columns. Plain values take the native JSON.stringify
 * path; only values holding a bigint (int64 beyond 2^53) or bytes take the slower writer,
 * which keeps the integer exact and writes bytes as base64 (the OTLP JSON mapping for bytes).
 */
import { renderJson } from '../json/canonical.js';
import type { JsonValue } from '../normalize/step.js';
import type { AttributeValue } from './span-record.js';

export function toJsonText(value: unknown): string {
  return needsSlowPath(value) ? renderJson(value) : JSON.stringify(value);
}

/** bigint → number when exact, else decimal string; bytes → base64. */
export function toJsonValue(value: AttributeValue | undefined): JsonValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
  }
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return value.map(toJsonValue);
  if (typeof value === 'object') {
    const out: { [k: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value)) out[k] = toJsonValue(v);
    return out;
  }
  return value;
}

function needsSlowPath(value: unknown): boolean {
  if (value === null) return false;
  switch (typeof value) {
    case 'bigint':
      return true;
    case 'object':
      if (value instanceof Uint8Array) return true;
      if (Array.isArray(value)) return value.some(needsSlowPath);
      for (const k in value as object) if (needsSlowPath((value as Record<string, unknown>)[k])) return true;
      return false;
    default:
      return false;
  }
}
