/**
 * @module normalize/attrs
 * Small readers over unwrapped OTLP attribute values. Every layout stores numbers, strings
 * and JSON differently (int64 as number or bigint, JSON as a string or as a kvlist), so the
 * dialects read through these instead of casting.
 */
import type { AttributeValue, Attributes } from '../spans/span-record.js';
import type { JsonValue } from '../json/json-value.js';

/** A non-empty string, or null. Empty strings carry nothing (docs/architecture.md, invariant 5). */
export function str(v: AttributeValue | undefined): string | null {
  if (typeof v === 'string') return v === '' ? null : v;
  if (typeof v === 'number' || typeof v === 'bigint' || typeof v === 'boolean') return String(v);
  return null;
}

/** A finite number, or null. int64 beyond 2^53 arrives as bigint and is narrowed. */
export function num(v: AttributeValue | undefined): number | null {
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
}

/** The first attribute among keys that reads as a non-empty string. */
export function firstStr(attrs: Attributes, keys: readonly string[]): string | null {
  for (const k of keys) {
    const s = str(attrs[k]);
    if (s !== null) return s;
  }
  return null;
}

/** The first attribute among keys that reads as a number. */
export function firstNum(attrs: Attributes, keys: readonly string[]): number | null {
  for (const k of keys) {
    const n = num(attrs[k]);
    if (n !== null) return n;
  }
  return null;
}

/** Converts an attribute value to JSON: bigint → number (or string past 2^53), bytes dropped. */
export function toJson(v: AttributeValue | undefined): JsonValue | undefined {
  if (v === undefined) return undefined;
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return v;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v === 'bigint') return Number.isSafeInteger(Number(v)) ? Number(v) : v.toString();
  if (v instanceof Uint8Array) return undefined;
  if (Array.isArray(v)) {
    const out: JsonValue[] = [];
    for (const item of v) {
      const j = toJson(item);
      if (j !== undefined) out.push(j);
    }
    return out;
  }
  const out: { [k: string]: JsonValue } = {};
  for (const [k, item] of Object.entries(v)) {
    const j = toJson(item);
    if (j !== undefined) out[k] = j;
  }
  return out;
}

/** Parses any JSON text; undefined when it does not parse. */
export function parseJson(text: string): JsonValue | undefined {
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return undefined;
  }
}

/**
 * JSON-shaped text is text that parses as a JSON object or array; a string that merely looks
 * like a JSON string literal stays text (docs/architecture.md "Messages"). The first-character test keeps
 * JSON.parse off ordinary prose (the hot path: every message content goes through here).
 */
export function readJsonShaped(text: string): JsonValue {
  let i = 0;
  while (i < text.length && text.charCodeAt(i) <= 32) i++;
  const c = text.charCodeAt(i);
  if (c !== 123 /* { */ && c !== 91 /* [ */) return text;
  const parsed = parseJson(text);
  return parsed !== undefined && parsed !== null && typeof parsed === 'object' ? parsed : text;
}

/**
 * A structured attribute that may arrive as a JSON string (what JS and Python SDKs put on
 * spans) or as an unwrapped kvlist/array (what the spec prefers and log events must use).
 */
export function jsonAttr(v: AttributeValue | undefined): JsonValue | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') {
    if (v === '') return undefined;
    const parsed = parseJson(v);
    return parsed === undefined ? v : parsed;
  }
  return toJson(v);
}

/** A plain JSON object, or undefined. */
export function asObject(v: unknown): { [k: string]: JsonValue } | undefined {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof Uint8Array)
    ? (v as { [k: string]: JsonValue })
    : undefined;
}

/**
 * Groups flattened indexed keys: with prefix "llm.input_messages.", the key
 * "llm.input_messages.2.message.role" lands in result[2]["message.role"]. One pass over the
 * keys; indices may be sparse or out of order (OpenInference writes them as it goes). Values
 * are converted to JSON (toJson) because they become message content as they are: a bigint or
 * bytes value where a string was expected must not reach a digest (canonical JSON has no form
 * for either).
 */
export function indexedGroups(attrs: Attributes, prefix: string): Attributes[] {
  const byIndex = new Map<number, Attributes>();
  for (const key in attrs) {
    if (!key.startsWith(prefix)) continue;
    const dot = key.indexOf('.', prefix.length);
    const idxText = dot < 0 ? key.slice(prefix.length) : key.slice(prefix.length, dot);
    if (idxText === '' || !/^\d+$/.test(idxText)) continue;
    const idx = Number(idxText);
    let group = byIndex.get(idx);
    if (!group) {
      group = {};
      byIndex.set(idx, group);
    }
    const value = toJson(attrs[key]);
    if (value !== undefined) group[dot < 0 ? '' : key.slice(dot + 1)] = value;
  }
  return [...byIndex.entries()].sort((a, b) => a[0] - b[0]).map(([, g]) => g);
}

/** True when any key starts with prefix followed by a digit (cheap layout sniffing). */
export function hasIndexedKey(attrs: Attributes, prefix: string): boolean {
  for (const key in attrs) {
    if (key.startsWith(prefix)) {
      const c = key.charCodeAt(prefix.length);
      if (c >= 48 && c <= 57) return true;
    }
  }
  return false;
}
