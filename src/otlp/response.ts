/**
 * @module otlp/response
 * Response bodies, in the request's own encoding as OTLP requires: the Export response
 * (partial_success unset on full success) and google.rpc.Status for 4xx/5xx bodies.
 */
import type { Rejection } from '../spans/span-record.js';
import type { OtlpEncoding } from './decode.js';
import { otlpTypes } from './proto.js';

export type OtlpSignal = 'traces' | 'logs';

export interface PartialSuccess {
  /** how many records of the request were not accepted */
  rejected: number;
  /** English, for the sender's logs; with rejected 0 it is a warning */
  errorMessage: string;
}

/** The collector's HTTP exporter reads at most 64 KiB of a response; keep well below. */
const MAX_ERROR_MESSAGE_CHARS = 8192;

/**
 * ExportTraceServiceResponse / ExportLogsServiceResponse. Without `partial` (or with nothing
 * to report) the body is the empty message: zero bytes in protobuf, `{}` in JSON.
 */
export function encodeExportResponse(signal: OtlpSignal, encoding: OtlpEncoding, partial?: PartialSuccess): Uint8Array {
  const report = partial !== undefined && (partial.rejected > 0 || partial.errorMessage !== '');
  const countKey = signal === 'traces' ? 'rejectedSpans' : 'rejectedLogRecords';
  if (encoding === 'json') {
    if (!report) return Buffer.from('{}');
    // proto3 JSON: int64 as a decimal string, default values left out.
    const inner: Record<string, string> = {};
    if (partial.rejected > 0) inner[countKey] = String(partial.rejected);
    if (partial.errorMessage !== '') inner.errorMessage = partial.errorMessage;
    return Buffer.from(JSON.stringify({ partialSuccess: inner }));
  }
  const types = otlpTypes();
  const type = signal === 'traces' ? types.ExportTraceServiceResponse : types.ExportLogsServiceResponse;
  const value = report ? { partialSuccess: { [countKey]: partial.rejected, errorMessage: partial.errorMessage } } : {};
  return type.encode(type.fromObject(value)).finish();
}

/** The Content-Type of an OTLP/HTTP answer in this encoding. */
export function otlpContentType(encoding: OtlpEncoding): string {
  return encoding === 'json' ? 'application/json' : 'application/x-protobuf';
}

/** google.rpc.Status {code, message}: the body of an OTLP/HTTP error response. */
export function encodeStatus(encoding: OtlpEncoding, grpcCode: number, message: string): Uint8Array {
  if (encoding === 'json') return Buffer.from(JSON.stringify({ code: grpcCode, message }));
  const { Status } = otlpTypes();
  return Status.encode(Status.fromObject({ code: grpcCode, message })).finish();
}

/**
 * The partial_success for a request's rejections, or undefined when there were none. The
 * message names the first few reasons and the total, bounded in length so a request with
 * thousands of bad records cannot produce an oversized response.
 */
export function partialSuccessFor(signal: OtlpSignal, rejected: readonly Rejection[]): PartialSuccess | undefined {
  if (rejected.length === 0) return undefined;
  const noun = signal === 'traces' ? 'span' : 'log record';
  const shown = rejected.slice(0, 5).map((r) => `#${r.index}: ${r.reason}`);
  const more = rejected.length > shown.length ? `; and ${rejected.length - shown.length} more` : '';
  let errorMessage = `${rejected.length} ${noun}${rejected.length === 1 ? '' : 's'} rejected: ${shown.join('; ')}${more}`;
  if (errorMessage.length > MAX_ERROR_MESSAGE_CHARS)
    errorMessage = `${errorMessage.slice(0, MAX_ERROR_MESSAGE_CHARS - 3)}...`;
  return { rejected: rejected.length, errorMessage };
}
