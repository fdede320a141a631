/**
 * @module otlp
 * The OTLP wire layer: request bodies to protocol-free records, and response bodies back.
 * Transports (HTTP, gRPC) use only what is exported here.
 */
export { decodeLogsRequest, decodeTraceRequest, OtlpDecodeError } from './decode.js';
export type { DecodedLogs, DecodedTraces, OtlpEncoding } from './decode.js';
export { encodeExportResponse, encodeStatus, partialSuccessFor } from './response.js';
export type { OtlpSignal, PartialSuccess } from './response.js';
export { LOGS_EXPORT_PATH, otlpProtoDir, otlpTypes, TRACE_EXPORT_PATH } from './proto.js';
export type { OtlpTypes } from './proto.js';
