/**
 * @module otlp/decode
 * The front door's only knowledge of OTLP: a request body (already gunzipped by the
 * transport) in, protocol-free records out. A body that cannot be read as a whole throws
 * OtlpDecodeError (400 / INVALID_ARGUMENT); records with unusable ids are returned as
 * rejections, indexed by their position in the request, for partial_success.
 */
import type { LogRecord, Rejection, SpanRecord } from '../spans/span-record.js';
import { decodeLogsJson, decodeTraceJson } from './decode-json.js';
import { decodeLogsProtobuf, decodeTraceProtobuf } from './decode-protobuf.js';

export { OtlpDecodeError } from './decode-error.js';

/** protobuf: OTLP/HTTP application/x-protobuf and gRPC; json: OTLP/HTTP application/json. */
export type OtlpEncoding = 'protobuf' | 'json';

export interface DecodedTraces {
  spans: SpanRecord[];
  rejected: Rejection[];
}

export interface DecodedLogs {
  logs: LogRecord[];
  rejected: Rejection[];
}

/** Decode an ExportTraceServiceRequest. Throws OtlpDecodeError when the body is unreadable. */
export function decodeTraceRequest(body: Uint8Array, encoding: OtlpEncoding): DecodedTraces {
  return encoding === 'json' ? decodeTraceJson(body) : decodeTraceProtobuf(body);
}

/** Decode an ExportLogsServiceRequest. Throws OtlpDecodeError when the body is unreadable. */
export function decodeLogsRequest(body: Uint8Array, encoding: OtlpEncoding): DecodedLogs {
  return encoding === 'json' ? decodeLogsJson(body) : decodeLogsProtobuf(body);
}
