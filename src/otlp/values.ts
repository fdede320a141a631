/**
 * @module otlp/values
 * Small conversions both encodings share: enum numbers to names, 64-bit integers to
 * number/bigint, and attribute objects that cannot be hijacked by a "__proto__" key.
 */
import type { AttributeValue, Attributes, SpanKindName, StatusCodeName } from '../spans/span-record.js';

const SPAN_KINDS: readonly SpanKindName[] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUS_CODES: readonly StatusCodeName[] = ['unset', 'ok', 'error'];

export const SPAN_KIND_NUMBERS: Readonly<Record<string, number>> = {
  SPAN_KIND_UNSPECIFIED: 0,
  SPAN_KIND_INTERNAL: 1,
  SPAN_KIND_SERVER: 2,
  SPAN_KIND_CLIENT: 3,
  SPAN_KIND_PRODUCER: 4,
  SPAN_KIND_CONSUMER: 5,
};
export const STATUS_CODE_NUMBERS: Readonly<Record<string, number>> = {
  STATUS_CODE_UNSET: 0,
  STATUS_CODE_OK: 1,
  STATUS_CODE_ERROR: 2,
};

/** proto3 enums are open: a value from a newer spec than ours reads as the default. */
export function spanKindName(n: number): SpanKindName {
  return SPAN_KINDS[n] ?? 'unspecified';
}

export function statusCodeName(n: number): StatusCodeName {
  return STATUS_CODES[n] ?? 'unset';
}

/** The Long protobufjs returns for 64-bit fields (it ships `long`). */
export interface LongBits {
  low: number;
  high: number;
  unsigned: boolean;
}

const TWO_32 = 4294967296n;

/**
 * The latest time a record may carry: times are stored as PostgreSQL bigint nanoseconds, so
 * an OTLP fixed64 time past 2^63 - 1 (the year 2262) cannot be kept; such a record is
 * rejected on its own (partial_success), the rest of its request stored.
 */
export const MAX_STORED_NANOS = 2n ** 63n - 1n;

/** Why this time cannot be stored, or undefined. */
export function timeProblem(field: string, ns: bigint): string | undefined {
  return ns > MAX_STORED_NANOS
    ? `${field} ${ns} is past the latest time tapedeck stores (${MAX_STORED_NANOS} ns, in the year 2262)`
    : undefined;
}

/** fixed64 (times): an unsigned Long, or a plain number for a prototype default. */
export function unsignedToBigInt(v: LongBits | number): bigint {
  if (typeof v === 'number') return BigInt(v);
  return BigInt(v.high >>> 0) * TWO_32 + BigInt(v.low >>> 0);
}

/** int64 AnyValue: a number when it is a safe integer, else a bigint (never rounded). */
export function signedToValue(v: LongBits | number): number | bigint {
  if (typeof v === 'number') return v;
  // The common case, a value that fits 32 bits, costs no bigint at all.
  if ((v.high === 0 && v.low >= 0) || (v.high === -1 && v.low < 0)) return v.low;
  const big = BigInt.asIntN(64, BigInt(v.high >>> 0) * TWO_32 + BigInt(v.low >>> 0));
  return toSafeNumber(big);
}

export function toSafeNumber(big: bigint): number | bigint {
  return big >= -9007199254740991n && big <= 9007199254740991n ? Number(big) : big;
}

/**
 * Set an attribute on a plain object. A key "__proto__" assigned normally would replace the
 * object's prototype instead of storing the value; define it as an own property instead.
 */
export function setAttribute(target: Attributes, key: string, value: AttributeValue): void {
  if (key === '__proto__') {
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    target[key] = value;
  }
}

/** resource attribute service.name when it is a string; anything else was not reported. */
export function serviceNameOf(resource: Attributes): string | null {
  const name = Object.hasOwn(resource, 'service.name') ? resource['service.name'] : undefined;
  return typeof name === 'string' ? name : null;
}

/** event_name when set, else the older event.name attribute when it is a string. */
export function eventNameOf(eventName: string, attributes: Attributes): string | null {
  if (eventName !== '') return eventName;
  const fromAttribute = Object.hasOwn(attributes, 'event.name') ? attributes['event.name'] : undefined;
  return typeof fromAttribute === 'string' && fromAttribute !== '' ? fromAttribute : null;
}

/** Records of one resource or scope share these objects; freezing makes an accidental
 * write through one record fail loudly instead of changing its siblings. */
export function shared<T extends object>(value: T): Readonly<T> {
  return Object.freeze(value);
}
