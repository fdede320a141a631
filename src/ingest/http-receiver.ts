/**
 * @module ingest/http-receiver
 * OTLP/HTTP: POST /v1/traces and POST /v1/logs, protobuf or JSON, optionally compressed
 * (gzip, deflate, zstd). The answer
 * is encoded in the request's own content type: an Export*ServiceResponse on success (with
 * partial_success when some records were rejected), a google.rpc.Status on failure, with
 * Retry-After on retryable failures. Decoding and storing are the shared core's.
 */
import { ServerResponse } from 'node:http';
import { Hono, type Context } from 'hono';
import type { OtlpEncoding } from '../otlp/decode.js';
import { otlpContentType, type OtlpSignal } from '../otlp/response.js';
import { tenantOf } from '../auth/access.js';
import { guard } from '../auth/route-auth.js';
import { IngestError } from '../errors.js';
import { answerErrorsAsOtlp } from '../http/error-response.js';
import type { Admission, Turn } from './admission.js';
import { readRequestBody } from './body.js';
import { type ContentCoding, contentCodingOf } from './content-decoder.js';
import { untouchedIncoming } from '../http/node-incoming.js';
import type { IngestDeps, IngestMeta } from './ingest.js';
import { storeExportRequest } from './export-request.js';
import { arrivalTime } from './arrival.js';

export interface HttpReceiverDeps {
  ingest: IngestDeps;
  admission: Admission;
}

export interface HttpReceiverSettings {
  maxBodyBytes: number;
  maxRecordsPerRequest: number;
  bodyTimeoutMs: number;
}

const contentTypes: Record<string, OtlpEncoding> = {
  'application/x-protobuf': 'protobuf',
  'application/protobuf': 'protobuf',
  'application/json': 'json',
};

/**
 * Ingest needs a rw or admin credential; a tenant-bound one stores into its tenant. A refusal
 * is answered as an OTLP Status, like every other answer of these routes.
 */
const allowIngest = guard(
  { access: 'credential', role: 'rw', apiKey: false },
  { prepare: (c) => answerErrorsAsOtlp(c, encodingOf(c) ?? 'json'), ownMediaTypes: true },
);

export function createOtlpHttpRoutes(deps: HttpReceiverDeps, settings: HttpReceiverSettings): Hono {
  const app = new Hono();
  app.post('/v1/traces', allowIngest, (c) => handleExport(c, 'traces', deps, settings));
  app.post('/v1/logs', allowIngest, (c) => handleExport(c, 'logs', deps, settings));
  return app;
}

function encodingOf(c: Context): OtlpEncoding | undefined {
  return contentTypes[(c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase()];
}

async function handleExport(
  c: Context,
  signal: OtlpSignal,
  deps: HttpReceiverDeps,
  settings: HttpReceiverSettings,
): Promise<Response> {
  const mediaType = (c.req.header('content-type') ?? '').split(';')[0].trim().toLowerCase();
  const encoding = encodingOf(c);
  // Errors thrown from here on are rendered by the application's onError as a Status.
  answerErrorsAsOtlp(c, encoding ?? 'json');
  if (!encoding) {
    throw new IngestError(
      'unsupported_media_type',
      `unsupported Content-Type ${JSON.stringify(mediaType || '(none)')}: send application/x-protobuf or application/json`,
    );
  }
  const length = Number(c.req.header('content-length'));
  const announced = Number.isSafeInteger(length) && length >= 0 ? length : undefined; // absent: NaN
  const coding = contentCodingOf(c.req.header('content-encoding'));
  const receivedAt = arrivalTime();
  return deps.admission.run(
    async (turn) => {
      const meta: IngestMeta = { tenant: tenantOf(c), receivedAt };
      const read = () => readBody(c, coding, settings, announced, turn);
      const payload = await storeExportRequest(
        signal,
        encoding,
        read,
        settings.maxRecordsPerRequest,
        meta,
        deps.ingest,
      );
      return new Response(payload, { status: 200, headers: { 'content-type': otlpContentType(encoding) } });
    },
    { sizeBytes: announced, compressed: coding !== 'identity', signal: senderGone(c) },
  );
}

/**
 * Aborts when the sender's connection closes before it was answered, so a request whose
 * sender gave up stops waiting for its turn.
 */
function senderGone(c: Context): AbortSignal | undefined {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  if (!(outgoing instanceof ServerResponse)) return undefined;
  const gone = new AbortController();
  outgoing.once('close', () => gone.abort());
  return gone.signal;
}

/**
 * The request body, decompressed, within the bounds; the turn learns its decoded size. Its
 * own function so that no variable of the handler keeps the body alive while the decoded
 * batch is being written.
 */
async function readBody(
  c: Context,
  coding: ContentCoding,
  settings: HttpReceiverSettings,
  announcedBytes: number | undefined,
  turn: Turn,
): Promise<Buffer> {
  const body = await readRequestBody(untouchedIncoming(c) ?? c.req.raw.body, coding, {
    maxBytes: settings.maxBodyBytes,
    timeoutMs: settings.bodyTimeoutMs,
    expectedBytes: announcedBytes,
  });
  await turn.decoded(body.length);
  return body;
}
