/**
 * @module otlp/ids
 * Trace and span ids from either encoding, checked once for both: protobuf carries raw
 * bytes, OTLP/JSON carries hex (case-insensitive; base64 accepted as a fallback because
 * generic proto3-JSON encoders write bytes that way). Everything downstream sees lower-case
 * hex, so the two encodings of one span produce identical records.
 */

/** An id as read: lower-case hex, '' when absent or empty, or why it is unusable. */
export type IdRead = string | { problem: string };

export const TRACE_ID_BYTES = 16;
export const SPAN_ID_BYTES = 8;
const ZERO_TRACE_ID = '0'.repeat(TRACE_ID_BYTES * 2);
const ZERO_SPAN_ID = '0'.repeat(SPAN_ID_BYTES * 2);
const HEX = /^[0-9a-fA-F]*$/;
const BASE64 = /^(?:[A-Za-z0-9+/]|[A-Za-z0-9_-])*={0,2}$/;

/** Protobuf: raw bytes of the expected length. */
export function idFromBytes(bytes: Uint8Array, length: number, field: string): IdRead {
  if (bytes.length === 0) return '';
  if (bytes.length !== length) return { problem: `${field} is ${bytes.length} bytes, expected ${length}` };
  // Buffer.toString('hex') is native and lower-case; protobufjs hands us Buffer views.
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return buf.toString('hex');
}

/** OTLP/JSON: a hex string (any case), else base64 that decodes to exactly `length` bytes. */
export function idFromJson(value: unknown, length: number, field: string): IdRead {
  if (value === undefined || value === null || value === '') return '';
  if (typeof value !== 'string') return { problem: `${field} must be a hex string, got ${typeof value}` };
  if (value.length === length * 2 && HEX.test(value)) return value.toLowerCase();
  // A hex string never contains the base64 padding a 16- or 8-byte id needs, and a wrong-
  // length hex string cannot be a right-length id, so trying base64 second is unambiguous.
  if (BASE64.test(value)) {
    const bytes = Buffer.from(value, 'base64');
    if (bytes.length === length) return bytes.toString('hex');
  }
  const shown = value.length > 40 ? `${value.slice(0, 40)}...` : value;
  return { problem: `${field} "${shown}" is not ${length * 2} hex characters` };
}

/**
 * Why a span's own ids make it unusable, or undefined when they are fine. A span needs a
 * non-zero 16-byte trace id and a non-zero 8-byte span id; its parent may be absent or
 * all zeros (a root) but not the wrong length.
 */
export function spanIdProblem(traceId: IdRead, spanId: IdRead, parentSpanId: IdRead): string | undefined {
  if (typeof traceId !== 'string') return traceId.problem;
  if (traceId === '') return 'traceId is missing';
  if (traceId === ZERO_TRACE_ID) return 'traceId is all zeros';
  if (typeof spanId !== 'string') return spanId.problem;
  if (spanId === '') return 'spanId is missing';
  if (spanId === ZERO_SPAN_ID) return 'spanId is all zeros';
  if (typeof parentSpanId !== 'string') return parentSpanId.problem;
  return undefined;
}

/** A parent id that passed spanIdProblem: '' and all zeros both mean "root". */
export function parentOrNull(parentSpanId: string): string | null {
  return parentSpanId === '' || parentSpanId === ZERO_SPAN_ID ? null : parentSpanId;
}

/** A log record's optional correlation id: absent or all zeros is null, not an error. */
export function optionalId(id: IdRead): string | null | { problem: string } {
  if (typeof id !== 'string') return id;
  if (id === '' || id === ZERO_TRACE_ID || id === ZERO_SPAN_ID) return null;
  return id;
}

/** A link points at another span; it needs ids of the right length but may be all zeros. */
export function linkIdProblem(traceId: IdRead, spanId: IdRead, at: string): string | undefined {
  if (typeof traceId !== 'string') return `${at}.${traceId.problem}`;
  if (traceId === '') return `${at}.traceId is missing`;
  if (typeof spanId !== 'string') return `${at}.${spanId.problem}`;
  if (spanId === '') return `${at}.spanId is missing`;
  return undefined;
}
