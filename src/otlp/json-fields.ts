/**
 * @module otlp/json-fields
 * Typed field readers for OTLP/JSON (the proto3 JSON mapping plus OTLP's own rules: ids as
 * hex, not base64; field names in lowerCamelCase, snake_case accepted). Each reader accepts what real senders write, treats
 * absent and null as the proto3 default, and otherwise throws OtlpDecodeError naming the
 * exact path, so a bad body is refused with a message the sender can act on.
 */
import { OtlpDecodeError } from './decode-error.js';
import { toSafeNumber } from './values.js';

export type JsonObject = Record<string, unknown>;

const MAX_U32 = 4294967295;
const MAX_U64 = 18446744073709551615n;
const MIN_I64 = -9223372036854775808n;
const MAX_I64 = 9223372036854775807n;
const UNSIGNED = /^\d+$/;
const SIGNED = /^-?\d+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]|[A-Za-z0-9_-])*={0,2}$/;

export function bad(message: string): OtlpDecodeError {
  return new OtlpDecodeError(message);
}

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return typeof v === 'object' ? 'an object' : `${typeof v} ${JSON.stringify(v)?.slice(0, 40)}`;
}

export function isObject(v: unknown): v is JsonObject {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A field by its OTLP/JSON lowerCamelCase name, or the proto snake_case name that
 * lenient senders (generic proto3-JSON encoders with preserve-names) write. */
export function field(o: JsonObject, camel: string, snake?: string): unknown {
  const v = o[camel];
  return v === undefined && snake !== undefined ? o[snake] : v;
}

/** A nested message: absent/null reads as undefined (unset), anything but an object is bad. */
export function message(v: unknown, path: string): JsonObject | undefined {
  if (v === undefined || v === null) return undefined;
  if (!isObject(v)) throw bad(`${path} must be an object, got ${describe(v)}`);
  return v;
}

/** An element of a repeated message field: null has no meaning there, so it is bad too. */
export function element(v: unknown, path: string): JsonObject {
  if (!isObject(v)) throw bad(`${path} must be an object, got ${describe(v)}`);
  return v;
}

/** A repeated field: absent/null is empty. */
export function list(v: unknown, path: string): unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw bad(`${path} must be a list, got ${describe(v)}`);
  return v;
}

export function string(v: unknown, path: string): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw bad(`${path} must be a string, got ${describe(v)}`);
  return v;
}

export function bool(v: unknown, path: string): boolean {
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') throw bad(`${path} must be true or false, got ${describe(v)}`);
  return v;
}

/** uint32 / fixed32: a JSON number (proto3 JSON also allows a decimal string). */
export function uint32(v: unknown, path: string): number {
  if (v === undefined || v === null) return 0;
  const n = typeof v === 'string' && UNSIGNED.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > MAX_U32) {
    throw bad(`${path} must be an unsigned 32-bit integer, got ${describe(v)}`);
  }
  return n;
}

/** fixed64 nanosecond times: a decimal string (the mapping) or a number (what some write). */
export function uint64(v: unknown, path: string): bigint {
  if (v === undefined || v === null) return 0n;
  let big: bigint | undefined;
  if (typeof v === 'string' && UNSIGNED.test(v)) big = BigInt(v);
  else if (typeof v === 'number' && Number.isInteger(v) && v >= 0) big = BigInt(v);
  if (big === undefined || big > MAX_U64)
    throw bad(`${path} must be an unsigned 64-bit integer (decimal string or number), got ${describe(v)}`);
  return big;
}

/** int64 values: string or number; a number when it is a safe integer, else a bigint. */
export function int64(v: unknown, path: string): number | bigint {
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  let big: bigint | undefined;
  if (typeof v === 'string' && SIGNED.test(v)) big = BigInt(v);
  else if (typeof v === 'number' && Number.isInteger(v)) big = BigInt(v);
  if (big === undefined || big < MIN_I64 || big > MAX_I64)
    throw bad(`${path} must be a 64-bit integer (decimal string or number), got ${describe(v)}`);
  return toSafeNumber(big);
}

/** double: a number, or the proto3 JSON strings "NaN", "Infinity", "-Infinity" or a
 * decimal string. */
export function double(v: unknown, path: string): number {
  if (typeof v === 'number') return v;
  if (typeof v === 'string') {
    if (v === 'NaN') return NaN;
    if (v === 'Infinity') return Infinity;
    if (v === '-Infinity') return -Infinity;
    const n = v.trim() === '' ? NaN : Number(v);
    if (Number.isFinite(n)) return n;
  }
  throw bad(`${path} must be a number, got ${describe(v)}`);
}

/** bytes (other than ids): standard or URL-safe base64, as proto3 JSON says. */
export function bytes(v: unknown, path: string): Uint8Array {
  if (typeof v !== 'string' || !BASE64.test(v)) throw bad(`${path} must be a base64 string, got ${describe(v)}`);
  return new Uint8Array(Buffer.from(v, 'base64'));
}

/** An enum: its number (what OTLP/JSON requires) or its name (what lenient senders write). */
export function enumValue(v: unknown, names: Readonly<Record<string, number>>, path: string): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && Object.hasOwn(names, v)) return names[v];
  throw bad(`${path} must be an enum number or one of ${Object.keys(names).join(', ')}, got ${describe(v)}`);
}
