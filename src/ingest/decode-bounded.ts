/**
 * @module ingest/decode-bounded
 * Decodes an export request within the bound on spans (or log records) per request, for
 * both transports. A protobuf body is counted before it is decoded (its records would cost
 * several times its size in memory); a JSON body, already parsed whole by decoding, after.
 */
import { IngestError } from '../errors.js';
import { countOtlpRecords } from '../otlp/count-records.js';
import {
  type DecodedLogs,
  type DecodedTraces,
  decodeLogsRequest,
  decodeTraceRequest,
  type OtlpEncoding,
} from '../otlp/decode.js';

export function decodeTracesWithin(body: Uint8Array, encoding: OtlpEncoding, maxRecords: number): DecodedTraces {
  if (encoding === 'protobuf') checkCount('spans', countOtlpRecords(body), maxRecords);
  const decoded = decodeTraceRequest(body, encoding);
  checkCount('spans', decoded.spans.length + decoded.rejected.length, maxRecords);
  return decoded;
}

export function decodeLogsWithin(body: Uint8Array, encoding: OtlpEncoding, maxRecords: number): DecodedLogs {
  if (encoding === 'protobuf') checkCount('log records', countOtlpRecords(body), maxRecords);
  const decoded = decodeLogsRequest(body, encoding);
  checkCount('log records', decoded.logs.length + decoded.rejected.length, maxRecords);
  return decoded;
}

function checkCount(what: string, count: number, maxRecords: number): void {
  if (count <= maxRecords) return;
  throw new IngestError(
    'too_large',
    `the request holds ${count} ${what}, over the limit of ${maxRecords} per request (--max-records-per-request); split the batch; nothing was stored`,
  );
}
