/**
 * @module tapes/attribute-json
 * Attribute values → JSON for jsonb columns. Plain values take the native JSON.stringify
 * path, unless they hold long text (a prompt, an answer): then its strings are written by
 * json-string.ts, several times quicker than JSON.stringify, and the rest as JSON.stringify
 * would. Only values holding a bigint (int64 beyond 2^53) or
 * bytes take the slower writer, which keeps the integer exact and writes bytes as base64 (the
 * OTLP JSON mapping for bytes).
 *
 * AttributeJson carries a value to binary COPY, which has it write that JSON straight into
 * the COPY data (writeJsonText): a prompt's JSON then goes from the escaper's memory into the
 * COPY buffer with no string built for it, nor for the whole, which concatenating pieces and
 * then flattening them copied two or three times over (several times the request's size in
 * short-lived strings for long prompts).
 */
import { renderJson } from '../json/canonical.js';
import { memberJson, TextSink, WASM_MIN_CHARS, writeJsonString, type ByteSink } from '../json/json-string.js';
import type { JsonValue } from '../json/json-value.js';
import type { Utf8Source } from '../store/copy-binary.js';
import type { AttributeValue } from '../spans/span-record.js';

export function toJsonText(value: unknown): string {
  const shape = shapeOf(value);
  if (shape === Shape.Exact) return renderJson(value);
  if (shape !== Shape.LongText) return JSON.stringify(value);
  const sink = new TextSink();
  plainJsonInto(value, sink);
  return sink.text;
}

/** toJsonText(value), written into sink rather than returned. */
export function writeJsonText(value: unknown, sink: ByteSink): void {
  const shape = shapeOf(value);
  if (shape === Shape.LongText) plainJsonInto(value, sink);
  else sink.utf8(shape === Shape.Exact ? renderJson(value) : JSON.stringify(value));
}

/** A jsonb column's value: binary COPY writes its JSON into the COPY data; String() gives toJsonText. */
export class AttributeJson implements Utf8Source {
  constructor(readonly value: unknown) {}

  writeUtf8(sink: ByteSink): void {
    writeJsonText(this.value, sink);
  }

  toString(): string {
    return toJsonText(this.value);
  }
}

/** bigint → number when exact, else decimal string; bytes → base64. */
export function toJsonValue(value: AttributeValue | undefined): JsonValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'bigint') {
    return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
      ? Number(value)
      : value.toString();
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

const Shape = {
  /** JSON.stringify writes it as it is */
  Plain: 0,
  /** plain, with a string of WASM_MIN_CHARS or more */
  LongText: 1,
  /** a bigint or bytes: renderJson */
  Exact: 2,
} as const;
type Shape = (typeof Shape)[keyof typeof Shape];

function shapeOf(value: unknown): Shape {
  if (value === null) return Shape.Plain;
  switch (typeof value) {
    case 'bigint':
      return Shape.Exact;
    case 'string':
      return value.length >= WASM_MIN_CHARS ? Shape.LongText : Shape.Plain;
    case 'object': {
      if (value instanceof Uint8Array) return Shape.Exact;
      let shape: Shape = Shape.Plain;
      const items: unknown[] = Array.isArray(value) ? value : Object.values(value as object);
      for (const item of items) {
        const s = shapeOf(item);
        if (s === Shape.Exact) return s;
        if (s > shape) shape = s;
      }
      return shape;
    }
    default:
      return Shape.Plain;
  }
}

/**
 * JSON.stringify(value) for a plain value (no bigint, no bytes) that it gives JSON for (not
 * undefined), into sink, with strings written by writeJsonString: members in the same order,
 * members JSON.stringify leaves out left out, and such items null.
 */
function plainJsonInto(value: unknown, sink: ByteSink): void {
  if (typeof value === 'string') {
    writeJsonString(value, sink);
    return;
  }
  if (value === null || typeof value !== 'object') {
    sink.utf8(JSON.stringify(value));
    return;
  }
  if (Array.isArray(value)) {
    sink.utf8('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) sink.utf8(',');
      const item: unknown = value[i];
      if (hasNoJson(item)) sink.utf8('null');
      else plainJsonInto(item, sink);
    }
    sink.utf8(']');
    return;
  }
  sink.utf8('{');
  let first = true;
  for (const key of Object.keys(value)) {
    const item = (value as Record<string, unknown>)[key];
    if (hasNoJson(item)) continue;
    if (!first) sink.utf8(',');
    sink.utf8(memberJson(key));
    first = false;
    plainJsonInto(item, sink);
  }
  sink.utf8('}');
}

/** What JSON.stringify leaves out of an object (and writes as null in an array). */
function hasNoJson(value: unknown): boolean {
  return value === undefined || typeof value === 'function' || typeof value === 'symbol';
}
