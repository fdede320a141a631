/**
 * Every real capture is accepted and every span in it is stored; where a
 * capture holds log records, they are stored and linked to their span.
 *
 * Scope: the raw OTLP bodies real instrumentation libraries sent (test/fixtures/corpus and
 * test/fixtures/otlp), replayed to a running tapedeck exactly
 * as they were captured: the transport, path, Content-Type and Content-Encoding recorded in
 * each capture's requests.jsonl (HTTP bodies byte for byte, gzip ones still compressed; gRPC
 * messages through a @grpc/grpc-js client). What "every span" means is counted from the
 * bodies themselves with protobufjs / JSON.parse, not with our decoder.
 *
 * Bodies present in both fixture folders are sent once. requests.jsonl lines whose body was
 * not copied (big-prompt keeps its 300-600 KB bodies for one layout only, see
 * import-captures.sh) cannot be replayed and are left out.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpTypes } from '../../src/otlp/proto.js';
import { defaultConfig } from '../../src/config.js';
import { databaseKinds } from '../helpers/databases.js';
import { S3RVER_CREDENTIALS, startS3Server, type TestS3Server } from '../helpers/s3-server.js';
import {
  grpcExport,
  postOtlp,
  readExportResponse,
  readLogRows,
  readSpanRows,
  startTestTapedeck,
  type TestTapedeck,
  START_TIMEOUT_MS,
} from '../helpers/tapedeck-server.js';

const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures');
const ROOTS = ['corpus', 'otlp'];

interface CapturedRequest {
  file: string;
  transport: 'http' | 'grpc';
  signal: 'traces' | 'logs';
  contentType: string;
  contentEncoding: string | null;
  /** the bytes as they were sent (still gzip-compressed when they were) */
  raw: Buffer;
}

interface Capture {
  name: string;
  requests: CapturedRequest[];
}

function listCaptures(): Capture[] {
  const sent = new Set<string>();
  const out: Capture[] = [];
  for (const root of ROOTS) {
    const rootDir = path.join(FIXTURES, root);
    for (const layout of readdirSync(rootDir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      for (const scenario of readdirSync(path.join(rootDir, layout.name), { withFileTypes: true }).filter((d) =>
        d.isDirectory(),
      )) {
        const dir = path.join(rootDir, layout.name, scenario.name);
        if (!existsSync(path.join(dir, 'requests.jsonl'))) continue;
        const requests: CapturedRequest[] = [];
        for (const line of readFileSync(path.join(dir, 'requests.jsonl'), 'utf8').split('\n').filter(Boolean)) {
          const entry = JSON.parse(line) as Omit<CapturedRequest, 'raw'>;
          const file = path.join(dir, entry.file);
          if (!existsSync(file)) continue;
          const raw = readFileSync(file);
          const digest = createHash('sha256')
            .update(`${entry.transport} ${entry.contentType} ${entry.contentEncoding}\n`)
            .update(raw)
            .digest('hex');
          if (sent.has(digest)) continue;
          sent.add(digest);
          requests.push({ ...entry, raw });
        }
        if (requests.length > 0) out.push({ name: `${root}/${layout.name}/${scenario.name}`, requests });
      }
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

// ---------------------------------------------------------------------------------------
// Counting what a body holds, independently of src/otlp/decode

interface Held {
  spans: Set<string>; // "<trace hex>/<span hex>"
  logs: { traceId: string; spanId: string }[];
}

const hexOf = (v: unknown): string =>
  typeof v === 'string' ? v.toLowerCase() : Buffer.from(v as Uint8Array).toString('hex');

type Loose = any; // the wire shape, read loosely: both the protobufjs message and OTLP/JSON

function countHeld(request: CapturedRequest, into: Held): void {
  const bytes = request.contentEncoding === 'gzip' ? gunzipSync(request.raw) : request.raw;
  const json = request.contentType === 'application/json';
  const types = otlpTypes();
  const type = request.signal === 'traces' ? types.ExportTraceServiceRequest : types.ExportLogsServiceRequest;
  const message: Loose = json ? JSON.parse(bytes.toString('utf8')) : type.decode(bytes);
  if (request.signal === 'traces') {
    for (const rs of message.resourceSpans ?? []) {
      for (const ss of rs.scopeSpans ?? []) {
        for (const s of ss.spans ?? []) into.spans.add(`${hexOf(s.traceId)}/${hexOf(s.spanId)}`);
      }
    }
  } else {
    for (const rl of message.resourceLogs ?? []) {
      for (const sl of rl.scopeLogs ?? []) {
        for (const l of sl.logRecords ?? [])
          into.logs.push({ traceId: hexOf(l.traceId ?? ''), spanId: hexOf(l.spanId ?? '') });
      }
    }
  }
}

// ---------------------------------------------------------------------------------------

async function replay(
  t: TestTapedeck,
  request: CapturedRequest,
): Promise<{ ok: boolean; detail: string; rejected: number }> {
  if (request.transport === 'grpc') {
    const answer = await grpcExport(t.grpcAddress, request.signal, request.raw);
    if (answer.code !== 0) return { ok: false, detail: `gRPC ${answer.code} ${answer.details}`, rejected: 0 };
    return {
      ok: true,
      detail: '',
      rejected: readExportResponse(request.signal, answer.response!, 'protobuf').rejected,
    };
  }
  const headers: Record<string, string> = request.contentEncoding
    ? { 'content-encoding': request.contentEncoding }
    : {};
  const answer = await postOtlp(t, request.signal, request.raw, request.contentType, headers);
  const encoding = request.contentType === 'application/json' ? 'json' : 'protobuf';
  if (answer.status !== 200)
    return { ok: false, detail: `HTTP ${answer.status} ${answer.body.toString('utf8')}`, rejected: 0 };
  expect(answer.headers['content-type']).toBe(request.contentType);
  return { ok: true, detail: '', rejected: readExportResponse(request.signal, answer.body, encoding).rejected };
}

const captures = listCaptures();

describe('the fixture corpus', () => {
  it('is there to replay: captures with spans, logs, JSON, gRPC and gzip bodies', () => {
    const all = captures.flatMap((c) => c.requests);
    expect(captures.length).toBeGreaterThanOrEqual(30);
    expect(all.some((r) => r.signal === 'logs')).toBe(true);
    expect(all.some((r) => r.transport === 'grpc')).toBe(true);
    expect(all.some((r) => r.contentType === 'application/json')).toBe(true);
    expect(
      all
        .filter((r) => r.contentEncoding === 'gzip')
        .map((r) => r.contentType)
        .sort(),
    ).toEqual(['application/json', 'application/x-protobuf']);
  });
});

describe.each(databaseKinds)('real captures replayed to tapedeck (%s)', (kind) => {
  let t: TestTapedeck;
  beforeAll(async () => {
    t = await startTestTapedeck(kind);
  }, START_TIMEOUT_MS);
  afterAll(async () => t?.close());

  it.each(captures.map((c) => [c.name, c] as const))(
    '%s: every request is accepted and every span stored once, logs linked to their span',
    (_name, capture) => replayAndCheck(t, capture),
  );
});

describe.each(databaseKinds)('real captures replayed to tapedeck with payloads in S3 (%s)', (kind) => {
  let t: TestTapedeck;
  let s3: TestS3Server;
  const aws = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'] as const;
  const before = aws.map((name) => process.env[name]);
  beforeAll(async () => {
    s3 = await startS3Server();
    // The S3 backend takes its credentials from the standard AWS environment, as in production.
    process.env.AWS_ACCESS_KEY_ID = S3RVER_CREDENTIALS.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = S3RVER_CREDENTIALS.secretAccessKey;
    t = await startTestTapedeck(
      kind,
      {
        payloadStore: 's3',
        s3Endpoint: s3.endpoint,
        s3Bucket: s3.bucket,
        s3Prefix: 'corpus',
        s3ForcePathStyle: true,
      },
      { payloads: 'config' },
    );
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await t?.close();
    await s3?.close();
    aws.forEach((name, i) => {
      if (before[i] === undefined) delete process.env[name];
      else process.env[name] = before[i];
    });
  });

  it('stores every capture, and every payload over the threshold lands in the bucket, nowhere else', async () => {
    for (const capture of captures) await replayAndCheck(t, capture);
    const rows = await t.db.query<{ text: string }>(
      "SELECT coalesce(request::text, '') || coalesce(response::text, '') AS text FROM tapedeck_store.steps",
    );
    const referenced = new Set(rows.flatMap((r) => r.text.match(/sha256\/[0-9a-f]{64}/g) ?? []));
    // the big-prompt captures carry prompts over the 256 KiB threshold
    expect(referenced.size).toBeGreaterThan(0);
    expect(await s3.keys()).toEqual([...referenced].map((ref) => `corpus/${ref}`).sort());
    for (const ref of referenced) {
      const bytes = await s3.read(`corpus/${ref}`);
      expect(bytes.byteLength).toBeGreaterThan(defaultConfig.payloadThresholdBytes);
    }
    // nowhere else: not the data directory, not the database
    expect(existsSync(path.join(t.dataDir, 'payloads'))).toBe(false);
    const [held] = await t.db.query<{ n: bigint }>('SELECT count(*) AS n FROM tapedeck_store.payloads');
    expect(held.n).toBe(0n);
  });
});

async function replayAndCheck(t: TestTapedeck, capture: Capture): Promise<void> {
  // arrange
  const held: Held = { spans: new Set(), logs: [] };
  for (const r of capture.requests) countHeld(r, held);
  const traceIds = [...new Set([...held.spans].map((k) => k.split('/')[0]))];
  // act
  for (const r of capture.requests) {
    const outcome = await replay(t, r);
    expect(outcome, `${r.file} over ${r.transport}`).toEqual({ ok: true, detail: '', rejected: 0 });
  }
  // assert: spans, each exactly once
  const rows = await readSpanRows(t.db, traceIds);
  expect(held.spans.size).toBeGreaterThan(0);
  expect(rows.map((r) => `${r.trace_id}/${r.span_id}`).sort()).toEqual([...held.spans].sort());
  // assert: log records, each kept, each joined to the span it names
  if (held.logs.length > 0) {
    const logTraceIds = [...new Set(held.logs.map((l) => l.traceId))];
    const logs = await readLogRows(t.db, logTraceIds);
    expect(logs).toHaveLength(held.logs.length);
    const correlated = held.logs.filter((l) => l.spanId !== '' && !/^0+$/.test(l.spanId));
    expect(correlated.length).toBeGreaterThan(0);
    const [joined] = await t.db.query<{ linked: bigint; unlinked: bigint }>(
      `SELECT count(s.span_id) AS linked, count(*) FILTER (WHERE s.span_id IS NULL) AS unlinked
           FROM tapedeck.logs l LEFT JOIN tapedeck.spans s ON s.trace_id = l.trace_id AND s.span_id = l.span_id
          WHERE l.trace_id = ANY($1::text[]) AND l.span_id IS NOT NULL`,
      [logTraceIds],
    );
    expect(joined).toEqual({ linked: BigInt(correlated.length), unlinked: 0n });
  }
}
