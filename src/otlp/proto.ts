/**
 * @module otlp/proto
 * Loads our OTLP .proto files (proto/, written from the OTLP field names and numbers) with
 * protobufjs at runtime, once, on first use. Reflection types generate their decoders on
 * first use too, so there is no generated code to keep in step with the .proto files.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/** gRPC method paths (also the names the gRPC server registers). */
export const TRACE_EXPORT_PATH = '/opentelemetry.proto.collector.trace.v1.TraceService/Export';
export const LOGS_EXPORT_PATH = '/opentelemetry.proto.collector.logs.v1.LogsService/Export';

/** The .proto files that define everything we read and write; imports pull in the rest. */
export const OTLP_PROTO_FILES = [
  'opentelemetry/proto/collector/trace/v1/trace_service.proto',
  'opentelemetry/proto/collector/logs/v1/logs_service.proto',
  'google/rpc/status.proto',
] as const;

export interface OtlpTypes {
  root: protobuf.Root;
  ExportTraceServiceRequest: protobuf.Type;
  ExportTraceServiceResponse: protobuf.Type;
  ExportLogsServiceRequest: protobuf.Type;
  ExportLogsServiceResponse: protobuf.Type;
  Status: protobuf.Type;
  SeverityNumber: protobuf.Enum;
}

let protoDirCache: string | undefined;
let typesCache: OtlpTypes | undefined;

/**
 * The repository's proto/ directory. Tests run this file from src/otlp/, the built server
 * from dist/src/otlp/, and an installed package from node_modules/tapedeck/dist/src/otlp/,
 * so walk up until a proto/opentelemetry folder appears instead of counting levels.
 */
export function otlpProtoDir(): string {
  if (protoDirCache) return protoDirCache;
  const start = path.dirname(fileURLToPath(import.meta.url));
  for (let dir = start; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'proto');
    if (existsSync(path.join(candidate, 'opentelemetry'))) {
      protoDirCache = candidate;
      return candidate;
    }
    if (path.dirname(dir) === dir) throw new Error(`tapedeck: no proto/opentelemetry directory above ${start}`);
  }
}

/** The loaded OTLP types; loads and resolves the .proto files on the first call. */
export function otlpTypes(): OtlpTypes {
  if (typesCache) return typesCache;
  // Without Long, protobufjs decodes 64-bit fields to lossy doubles; nanosecond times and
  // int64 attributes above 2^53 would be silently rounded. protobufjs finds `long` (its
  // own dependency) at load; refuse to run rather than corrupt data if it did not.
  if (!protobuf.util.Long)
    throw new Error('tapedeck: protobufjs loaded without Long support; 64-bit values would lose precision');
  const dir = otlpProtoDir();
  const root = new protobuf.Root();
  // Imports are written relative to proto/; google/protobuf/* comes bundled with protobufjs.
  root.resolvePath = (_origin, target) => (target.startsWith('google/protobuf/') ? target : path.join(dir, target));
  root.loadSync([...OTLP_PROTO_FILES], { keepCase: false });
  root.resolveAll();
  typesCache = {
    root,
    ExportTraceServiceRequest: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'),
    ExportTraceServiceResponse: root.lookupType('opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse'),
    ExportLogsServiceRequest: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
    ExportLogsServiceResponse: root.lookupType('opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse'),
    Status: root.lookupType('google.rpc.Status'),
    SeverityNumber: root.lookupEnum('opentelemetry.proto.logs.v1.SeverityNumber'),
  };
  return typesCache;
}
