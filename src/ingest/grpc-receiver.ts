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
 *
 * Each service declares its auth decision in GRPC_SERVICES, as each HTTP route does with its
 * guard: the `authorization: Bearer <token>` metadata (what OTEL_EXPORTER_OTLP_HEADERS sets)
 * must name a rw or admin credential, and a tenant-bound one stores into its tenant.
 */
import * as grpc from '@grpc/grpc-js';
import { LOGS_EXPORT_PATH, TRACE_EXPORT_PATH } from '../otlp/proto.js';
import type { OtlpSignal } from '../otlp/response.js';
import type { Credentials } from '../auth/credentials.js';
import { type AuthDecision, accessForSecret, bearerSecret } from '../auth/route-auth.js';
import { classifyError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { Admission } from './admission.js';
import type { IngestDeps } from './ingest.js';
import { storeExportRequest } from './export-request.js';
import { arrivalTime } from './arrival.js';
import { observeRequest } from '../metrics/metrics.js';

export interface GrpcReceiverDeps {
  ingest: IngestDeps;
  admission: Admission;
  logger: Logger;
  /** null or absent: an open server */
  credentials?: Credentials | null;
}

/** Both OTLP services and what each needs from its caller (docs/security.md). */
export const GRPC_SERVICES: readonly { path: string; signal: OtlpSignal; decision: AuthDecision }[] = [
  { path: TRACE_EXPORT_PATH, signal: 'traces', decision: { access: 'credential', role: 'rw', apiKey: false } },
  { path: LOGS_EXPORT_PATH, signal: 'logs', decision: { access: 'credential', role: 'rw', apiKey: false } },
];

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
  for (const service of GRPC_SERVICES) {
    server.addService({ Export: exportMethod(service.path) }, { Export: handler(service, deps, max) });
  }
  return server;
}

function handler(
  service: (typeof GRPC_SERVICES)[number],
  deps: GrpcReceiverDeps,
  maxRecords: number,
): grpc.handleUnaryCall<Buffer, Buffer> {
  const { signal, decision, path } = service;
  return (call, callback) => {
    const started = performance.now();
    const receivedAt = arrivalTime();
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
    const authorization = call.metadata.get('authorization')[0];
    const authorized =
      decision.access === 'public'
        ? Promise.resolve(null)
        : accessForSecret(
            deps.credentials ?? null,
            bearerSecret(typeof authorization === 'string' ? authorization : undefined),
            decision,
            path,
          );
    authorized
      .then((access) =>
        deps.admission.run(
          () =>
            storeExportRequest(
              signal,
              'protobuf',
              async () => call.request,
              maxRecords,
              { tenant: access?.tenant ?? '', receivedAt },
              deps.ingest,
            ),
          {
            sizeBytes: call.request.length,
            heldBytes: call.request.length,
            signal: cancelled.signal,
            waitMs: Number.isFinite(deadlineMs) ? Math.max(0, deadlineMs - Date.now()) : undefined,
          },
        ),
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
