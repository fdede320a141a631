/**
 * @module ingest/export-request
 * One OTLP export request, after admission, for both transports: decode within the bounds,
 * store through the ingest core, answer with partial_success for the records that could not
 * be used, and count what happened (metrics/metrics.ts). Counting here rather than in each
 * transport keeps HTTP and gRPC from drifting apart in what they report.
 */
import type { OtlpEncoding } from '../otlp/decode.js';
import { encodeExportResponse, partialSuccessFor, type OtlpSignal } from '../otlp/response.js';
import { classifyError } from '../errors.js';
import type { Metrics } from '../metrics/metrics.js';
import { decodeLogsWithin, decodeTracesWithin } from './decode-bounded.js';
import { type IngestDeps, type IngestMeta, ingestLogs, ingestSpans } from './ingest.js';

/** The reason label of records a request carried that could not be used (partial success). */
export const UNUSABLE_RECORD = 'invalid_record';

/**
 * Decodes the body readBody gives (read only in the request's turn, and not kept once
 * decoded), stores its records, and returns the encoded Export*ServiceResponse.
 */
export async function storeExportRequest(
  signal: OtlpSignal,
  encoding: OtlpEncoding,
  readBody: () => Promise<Uint8Array>,
  maxRecords: number,
  meta: IngestMeta,
  deps: IngestDeps,
): Promise<Uint8Array> {
  const rejectedCounter = signal === 'traces' ? deps.metrics?.spansRejected : deps.metrics?.logsRejected;
  let rejected;
  if (signal === 'traces') {
    const decoded = decodeTracesWithin(await readBody(), encoding, maxRecords);
    rejected = decoded.rejected;
    await countFailure(rejectedCounter, decoded.spans.length, () => ingestSpans(decoded.spans, meta, deps));
  } else {
    const decoded = decodeLogsWithin(await readBody(), encoding, maxRecords);
    rejected = decoded.rejected;
    await countFailure(rejectedCounter, decoded.logs.length, () => ingestLogs(decoded.logs, meta, deps));
  }
  if (rejected.length > 0) rejectedCounter?.inc({ reason: UNUSABLE_RECORD }, rejected.length);
  return encodeExportResponse(signal, encoding, partialSuccessFor(signal, rejected));
}

/** Records a request could not store are rejected under the error type it is answered with. */
async function countFailure(
  counter: Metrics['spansRejected'] | undefined,
  records: number,
  store: () => Promise<unknown>,
): Promise<void> {
  try {
    await store();
  } catch (error) {
    if (records > 0) counter?.inc({ reason: classifyError(error).type }, records);
    throw error;
  }
}
