/**
 * @module ingest/grpc-receiver
 * OTLP/gRPC: TraceService/Export and LogsService/Export on @grpc/grpc-js. Messages pass
 * through as raw bytes (identity serializers) into the same decode and ingest core as HTTP;
 * grpc-js inflates gzip-compressed messages and enforces the message size bound.
 *
 * grpc-js reads a call's whole message before its handler runs, so bounds come before that:
 * each connection carries at most a bounded number of calls at once (HTTP/2
 * max_concurrent_streams: the sender's calls past it wait on its side, costing us nothing),
 * and a call waiting its turn counts its message against admission's held-bytes bound. A
 * call cancelled by its sender, or past its deadline, stops waiting; one cancelled while it
 * is stored still finishes its transaction, but no answer reaches the sender.
 */
import * as grpc from '@grpc/grpc-js';
import { LOGS_EXPORT_PATH, TRACE_EXPORT_PATH } from '../otlp/proto.js';
import type { OtlpSignal } from '../otlp/response.js';
import { classifyError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Admission } from './admission.js';
import type { IngestDeps } from './ingest.js';
import { storeExportRequest } from './export-request.js';
import { observeRequest } from '../metrics/metrics.js';

export interface GrpcReceiverDeps {
  ingest: IngestDeps;
  admission: Admission;
  logger: Logger;
}

export interface GrpcReceiverSettings {
  maxBodyBytes: number;
  maxRecordsPerRequest: number;
  /** calls one connection carries at once (HTTP/2 max_concurrent_streams) */
  maxInflightRequests: number;
}

const passThrough = (b: Buffer) => b;

function exportMethod(path: string): grpc.MethodDefinition<Buffer, Buffer> {
  return {
    path,
    requestStream: false,
    responseStream: false,
    requestSerialize: passThrough,
    requestDeserialize: passThrough,
    responseSerialize: passThrough,
    responseDeserialize: passThrough,
  };
}

export function createGrpcServer(deps: GrpcReceiverDeps, settings: GrpcReceiverSettings): grpc.Server {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': settings.maxBodyBytes,
    'grpc.max_send_message_length': 4 * 1024 * 1024,
    'grpc.max_concurrent_streams': settings.maxInflightRequests,
  });
  const max = settings.maxRecordsPerRequest;
  server.addService(
    { Export: exportMethod(TRACE_EXPORT_PATH) },
    { Export: handler('traces', TRACE_EXPORT_PATH, deps, max) },
  );
  server.addService(
    { Export: exportMethod(LOGS_EXPORT_PATH) },
    { Export: handler('logs', LOGS_EXPORT_PATH, deps, max) },
  );
  return server;
}

function handler(
  signal: OtlpSignal,
  path: string,
  deps: GrpcReceiverDeps,
  maxRecords: number,
): grpc.handleUnaryCall<Buffer, Buffer> {
  return (call, callback) => {
    const started = performance.now();
    const answered = (code: grpc.status) =>
      deps.ingest.metrics &&
      observeRequest(
        deps.ingest.metrics,
        { route: path, transport: 'grpc', status: grpc.status[code] },
        (performance.now() - started) / 1000,
      );
    const cancelled = new AbortController();
    call.once('cancelled', () => cancelled.abort());
    const deadline = call.getDeadline();
    const deadlineMs = deadline instanceof Date ? deadline.getTime() : deadline;
    deps.admission
      .run(
        () => storeExportRequest(signal, 'protobuf', async () => call.request, maxRecords, { tenant: '' }, deps.ingest),
        {
          sizeBytes: call.request.length,
          heldBytes: call.request.length,
          signal: cancelled.signal,
          waitMs: Number.isFinite(deadlineMs) ? Math.max(0, deadlineMs - Date.now()) : undefined,
        },
      )
      .then(
        (response) => {
          answered(grpc.status.OK);
          callback(null, Buffer.from(response));
        },
        (error: unknown) => {
          const c = classifyError(error);
          if (c.type === 'internal') deps.logger.error({ err: error, signal }, 'OTLP/gRPC export failed');
          const metadata = new grpc.Metadata();
          if (c.retryAfterSeconds !== undefined) metadata.set('retry-after', String(c.retryAfterSeconds));
          answered(c.spec.grpc);
          callback({ code: c.spec.grpc, details: c.message, metadata });
        },
      );
  };
}

/** Binds the server; resolves with the port actually bound (0 picks a free one). */
export function bindGrpcServer(server: grpc.Server, host: string, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.bindAsync(`${host}:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
}
