/**
 * Bad input gets a clear, specific answer and changes nothing else.
 *
 * Scope: the running server's answers to what a sender can get wrong, over OTLP/HTTP (in the
 * request's own encoding: google.rpc.Status as protobuf or JSON) and OTLP/gRPC: a body that
 * does not decode (400 / INVALID_ARGUMENT), an unsupported Content-Type or Content-Encoding
 * (415), a gzip header on a body that is not gzip (400), spans with unusable ids (rejected one
 * by one in partial_success while the good ones are stored), bodies over --max-body-bytes,
 * compressed or not (413 / RESOURCE_EXHAUSTED), more requests than --max-inflight-requests
 * (429 / UNAVAILABLE with Retry-After, and the server keeps serving), and empty requests (200).
 * Each case checks the status, the error text and that the stored row counts did not change
 * beyond what the request legitimately added. How decode words each problem in detail is
 * test/unit/otlp's; this is about the answer on the wire.
 */
import http from 'node:http';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { otlpTypes } from '../../src/otlp/proto.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  countRows,
  grpcExport,
  JSON_TYPE,
  postOtlp,
  PROTOBUF,
  randomSpanId,
  randomTraceId,
  readExportResponse,
  readSpanRows,
  readStatus,
  startTestTapedeck,
  traceBody,
  type HttpAnswer,
  type RowCounts,
  type TestTapedeck,
  START_TIMEOUT_MS,
} from '../helpers/tapedeck-server.js';

const MAX_BODY_BYTES = 64 * 1024;
const MAX_INFLIGHT = 2;
const INVALID_ARGUMENT = 3;
const RESOURCE_EXHAUSTED = 8;
const UNAVAILABLE = 14;

const encodingOf = (contentType: string) => (contentType === JSON_TYPE ? 'json' : 'protobuf');

describe.each(databaseKinds)('bad input (%s)', (kind) => {
  let t: TestTapedeck;
  let before: RowCounts;

  beforeAll(async () => {
    t = await startTestTapedeck(kind, { maxBodyBytes: MAX_BODY_BYTES, maxInflightRequests: MAX_INFLIGHT });
    // Something stored already, so "nothing changed" is not just "still empty".
    const traceId = randomTraceId();
    await postOtlp(
      t,
      'traces',
      traceBody(
        [
          { traceId, spanId: randomSpanId() },
          { traceId, spanId: randomSpanId() },
        ],
        'protobuf',
      ),
      PROTOBUF,
    );
  }, START_TIMEOUT_MS);
  afterAll(async () => t?.close());
  beforeEach(async () => {
    before = await countRows(t.db);
  });

  const unchanged = async () => expect(await countRows(t.db)).toEqual(before);

  /** An HTTP error answer: status, Status body in the request's encoding, no Retry-After. */
  function expectRefused(answer: HttpAnswer, status: number, encoding: 'protobuf' | 'json', message: RegExp | string) {
    expect(answer.status).toBe(status);
    expect(answer.headers['content-type']).toBe(encoding === 'json' ? JSON_TYPE : PROTOBUF);
    expect(answer.headers['retry-after']).toBeUndefined();
    const body = readStatus(answer.body, encoding);
    if (typeof message === 'string') expect(body.message).toBe(message);
    else expect(body.message).toMatch(message);
    return body;
  }

  describe('a body that does not decode', () => {
    it.each([
      [
        'protobuf garbage',
        'traces',
        PROTOBUF,
        Buffer.from([0x17, 0x00]),
        'request body is not a valid ExportTraceServiceRequest protobuf: invalid wire type 7 at offset 1',
      ],
      [
        'truncated protobuf',
        'traces',
        PROTOBUF,
        traceBody([{ traceId: randomTraceId(), spanId: randomSpanId(), name: 'x'.repeat(200) }], 'protobuf').subarray(
          0,
          100,
        ),
        /^request body is not a valid ExportTraceServiceRequest protobuf: index out of range/,
      ],
      [
        'JSON sent as protobuf',
        'traces',
        PROTOBUF,
        Buffer.from('{"resourceSpans":[]}'),
        /looks like JSON; send it with Content-Type: application\/json/,
      ],
      ['invalid JSON', 'traces', JSON_TYPE, Buffer.from('{"resourceSpans": ['), /^request body is not valid JSON/],
      [
        'JSON that is not an object',
        'traces',
        JSON_TYPE,
        Buffer.from('[]'),
        'request body must be a JSON object (an ExportTraceServiceRequest), got a list',
      ],
      [
        'JSON of the wrong shape',
        'traces',
        JSON_TYPE,
        Buffer.from('{"resourceSpans": {}}'),
        'resourceSpans must be a list, got an object',
      ],
      [
        'logs protobuf garbage',
        'logs',
        PROTOBUF,
        Buffer.from([0x17, 0x00]),
        'request body is not a valid ExportLogsServiceRequest protobuf: invalid wire type 7 at offset 1',
      ],
      [
        'logs JSON that is not an object',
        'logs',
        JSON_TYPE,
        Buffer.from('"logs"'),
        /must be a JSON object \(an ExportLogsServiceRequest\)/,
      ],
    ] as const)(
      '%s is answered 400 naming the problem, and nothing is stored',
      async (_case, signal, contentType, body, message) => {
        const answer = await postOtlp(t, signal, body, contentType);
        expect(expectRefused(answer, 400, encodingOf(contentType), message).code).toBe(INVALID_ARGUMENT);
        await unchanged();
      },
    );

    it.each([
      ['traces', /^request body is not a valid ExportTraceServiceRequest protobuf/],
      ['logs', /^request body is not a valid ExportLogsServiceRequest protobuf/],
    ] as const)(
      'over gRPC (%s) is answered INVALID_ARGUMENT naming the problem, and nothing is stored',
      async (signal, message) => {
        const answer = await grpcExport(t.grpcAddress, signal, Buffer.from([0x0a, 0x05, 0x01]));
        expect(answer.code).toBe(INVALID_ARGUMENT);
        expect(answer.details).toMatch(message);
        await unchanged();
      },
    );
  });

  describe('what the body is said to be', () => {
    it.each([
      ['text/plain', 'unsupported Content-Type "text/plain": send application/x-protobuf or application/json'],
      [
        'application/grpc',
        'unsupported Content-Type "application/grpc": send application/x-protobuf or application/json',
      ],
      ['', 'unsupported Content-Type "(none)": send application/x-protobuf or application/json'],
    ])('an unsupported Content-Type %j is answered 415, and nothing is stored', async (contentType, message) => {
      const answer = await postOtlp(
        t,
        'traces',
        traceBody([{ traceId: randomTraceId(), spanId: randomSpanId() }], 'protobuf'),
        contentType,
      );
      expect(expectRefused(answer, 415, 'json', message).code).toBe(INVALID_ARGUMENT);
      await unchanged();
    });

    it.each([PROTOBUF, JSON_TYPE])(
      'an unsupported Content-Encoding is answered 415 (%s), and nothing is stored',
      async (contentType) => {
        const body = traceBody([{ traceId: randomTraceId(), spanId: randomSpanId() }], encodingOf(contentType));
        const answer = await postOtlp(t, 'traces', body, contentType, { 'content-encoding': 'br' });
        expectRefused(
          answer,
          415,
          encodingOf(contentType),
          'unsupported Content-Encoding "br": send gzip, deflate, zstd or no encoding',
        );
        await unchanged();
      },
    );

    it('a gzip Content-Encoding on a body that is not gzip is answered 400, and nothing is stored', async () => {
      const body = traceBody([{ traceId: randomTraceId(), spanId: randomSpanId() }], 'protobuf');
      const answer = await postOtlp(t, 'traces', body, PROTOBUF, { 'content-encoding': 'gzip' });
      expectRefused(
        answer,
        400,
        'protobuf',
        /^Content-Encoding is gzip but the body does not inflate: .+; nothing was stored$/,
      );
      await unchanged();
    });

    it('a gzip body sent without Content-Encoding is answered 400 with a hint', async () => {
      const body = gzipSync(traceBody([{ traceId: randomTraceId(), spanId: randomSpanId() }], 'protobuf'));
      const answer = await postOtlp(t, 'traces', body, PROTOBUF);
      expectRefused(answer, 400, 'protobuf', /the body is gzip-compressed; send it with Content-Encoding: gzip/);
      await unchanged();
    });
  });

  describe('spans with unusable ids', () => {
    const good = () => ({ traceId: randomTraceId(), spanId: randomSpanId() });
    const cases = (traceId: string) => [
      { traceId: traceId.slice(0, 30), spanId: randomSpanId(), name: 'short-trace' },
      { traceId, spanId: '0000000000000000', name: 'zero-span' },
      { traceId: '0'.repeat(32), spanId: randomSpanId(), name: 'zero-trace' },
      { traceId, spanId: `${randomSpanId()}ab`, name: 'long-span' },
    ];

    it.each([
      ['OTLP/HTTP protobuf', 'protobuf'],
      ['OTLP/HTTP JSON', 'json'],
      ['OTLP/gRPC', 'grpc'],
    ] as const)(
      'are rejected one by one in partial_success over %s while the good spans of the request are stored',
      async (_door, how) => {
        // arrange: good, bad, good, bad, bad, good, bad
        const [a, b, c] = [good(), good(), good()];
        c.traceId = a.traceId;
        const bad = cases(a.traceId);
        const spans = [
          { ...a, name: 'good-a' },
          bad[0],
          { ...b, name: 'good-b' },
          bad[1],
          bad[2],
          { ...c, name: 'good-c' },
          bad[3],
        ];
        const body = traceBody(spans, how === 'json' ? 'json' : 'protobuf');
        // act
        let partial;
        if (how === 'grpc') {
          const answer = await grpcExport(t.grpcAddress, 'traces', body);
          expect(answer.code).toBe(0);
          partial = readExportResponse('traces', answer.response!, 'protobuf');
        } else {
          const answer = await postOtlp(t, 'traces', body, how === 'json' ? JSON_TYPE : PROTOBUF);
          expect(answer.status).toBe(200);
          partial = readExportResponse('traces', answer.body, how);
        }
        // assert: four rejections, each by position and reason
        expect(partial.rejected).toBe(4);
        expect(partial.errorMessage).toMatch(/^4 spans rejected: /);
        expect(partial.errorMessage).toContain('#1: span "short-trace": traceId');
        expect(partial.errorMessage).toContain('#3: span "zero-span": spanId is all zeros');
        expect(partial.errorMessage).toContain('#4: span "zero-trace": traceId is all zeros');
        expect(partial.errorMessage).toContain('#6: span "long-span": spanId');
        const stored = await readSpanRows(t.db, [a.traceId, b.traceId]);
        expect(stored.map((r) => r.name).sort()).toEqual(['good-a', 'good-b', 'good-c']);
        expect(await countRows(t.db)).toEqual({ ...before, spans: before.spans + 3 });
      },
    );
  });

  describe('log records with unusable ids', () => {
    it('are rejected one by one in partial_success while the good records of the request are stored', async () => {
      // arrange: a record with a span id of the wrong length between a correlated one and one with none
      const { ExportLogsServiceRequest: R } = otlpTypes();
      const traceId = randomTraceId();
      const record = (body: string, spanId: Buffer) => ({
        timeUnixNano: '1700000000000000001',
        body: { stringValue: body },
        traceId: Buffer.from(traceId, 'hex'),
        spanId,
      });
      const body = R.encode(
        R.fromObject({
          resourceLogs: [
            {
              scopeLogs: [
                {
                  logRecords: [
                    record('good', Buffer.from(randomSpanId(), 'hex')),
                    record('bad', Buffer.alloc(3, 1)),
                    record('uncorrelated', Buffer.alloc(0)),
                  ],
                },
              ],
            },
          ],
        }),
      ).finish();
      // act
      const answer = await postOtlp(t, 'logs', body, PROTOBUF);
      // assert
      expect(answer.status).toBe(200);
      expect(readExportResponse('logs', answer.body, 'protobuf')).toEqual({
        rejected: 1,
        errorMessage: '1 log record rejected: #1: log record: spanId is 3 bytes, expected 8',
      });
      const stored = await t.db.query<{ body: string }>(
        'SELECT body FROM tapedeck.logs WHERE trace_id = $1 ORDER BY body',
        [traceId],
      );
      expect(stored.map((r) => r.body)).toEqual(['good', 'uncorrelated']);
      expect(await countRows(t.db)).toEqual({ ...before, logs: before.logs + 2 });
    });
  });

  describe('size bounds', () => {
    /** A valid one-span request of exactly `size` bytes, padded through one attribute. */
    function requestOfSize(size: number): Uint8Array {
      const traceId = randomTraceId();
      const spanId = randomSpanId();
      const bodyWith = (pad: number) =>
        traceBody([{ traceId, spanId, attributes: { pad: 'x'.repeat(pad) } }], 'protobuf');
      const guess = size - bodyWith(0).length;
      // A longer string can also lengthen its varint length prefixes: look around the guess.
      for (let pad = guess; pad > guess - 32; pad--) {
        const body = bodyWith(pad);
        if (body.length === size) return body;
      }
      throw new Error(`no padding gives ${size} bytes`);
    }

    it('a body of exactly --max-body-bytes is accepted; one byte more is answered 413 and stores nothing', async () => {
      const atLimit = await postOtlp(t, 'traces', requestOfSize(MAX_BODY_BYTES), PROTOBUF);
      expect(atLimit.status).toBe(200);
      const afterFirst = await countRows(t.db);
      expect(afterFirst.spans).toBe(before.spans + 1);
      const over = await postOtlp(t, 'traces', requestOfSize(MAX_BODY_BYTES + 1), PROTOBUF);
      expectRefused(
        over,
        413,
        'protobuf',
        `request body received exceeds the ${MAX_BODY_BYTES}-byte limit (--max-body-bytes); split the batch; nothing was stored`,
      );
      expect(readStatus(over.body, 'protobuf').code).toBe(RESOURCE_EXHAUSTED);
      expect(await countRows(t.db)).toEqual(afterFirst);
    });

    it('a body sent chunked, with no Content-Length, is answered 413 once it passes --max-body-bytes, and nothing is stored', async () => {
      // read from the Node request itself, whose reading stops (it is destroyed) at the bound
      const body = Buffer.from(requestOfSize(MAX_BODY_BYTES + 4096));
      const answer = await new Promise<HttpAnswer>((resolve, reject) => {
        const req = http.request(
          `${t.url}/v1/traces`,
          { method: 'POST', agent: false, headers: { 'content-type': PROTOBUF } },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
          },
        );
        // the server may close the connection once it answered: a write after that is no failure here
        req.on('error', (error) => (answerSeen ? undefined : reject(error)));
        let answerSeen = false;
        req.on('response', () => {
          answerSeen = true;
        });
        for (let at = 0; at < body.length; at += 8192) req.write(body.subarray(at, at + 8192));
        req.end();
      });
      expectRefused(
        answer,
        413,
        'protobuf',
        `request body received exceeds the ${MAX_BODY_BYTES}-byte limit (--max-body-bytes); split the batch; nothing was stored`,
      );
      await unchanged();
    });

    it('a small gzip body that inflates past --max-body-bytes is answered 413, and nothing is stored', async () => {
      const inflated = requestOfSize(MAX_BODY_BYTES * 4);
      const small = gzipSync(inflated);
      expect(small.length).toBeLessThan(MAX_BODY_BYTES / 16);
      const answer = await postOtlp(t, 'traces', small, PROTOBUF, { 'content-encoding': 'gzip' });
      expectRefused(
        answer,
        413,
        'protobuf',
        `request body decompressed exceeds the ${MAX_BODY_BYTES}-byte limit (--max-body-bytes); split the batch; nothing was stored`,
      );
      await unchanged();
    });

    it('a gRPC message over the bound is answered RESOURCE_EXHAUSTED, and nothing is stored', async () => {
      const answer = await grpcExport(t.grpcAddress, 'traces', requestOfSize(MAX_BODY_BYTES + 1));
      expect(answer.code).toBe(RESOURCE_EXHAUSTED);
      expect(answer.details).toMatch(/larger than max/i);
      await unchanged();
    });

    it('a small gzip-compressed gRPC message that inflates past the bound is answered RESOURCE_EXHAUSTED, and nothing is stored', async () => {
      const answer = await grpcExport(t.grpcAddress, 'traces', requestOfSize(MAX_BODY_BYTES * 4), { gzip: true });
      expect(answer.code).toBe(RESOURCE_EXHAUSTED);
      expect(answer.details).toBe(`Received message that decompresses to a size larger than ${MAX_BODY_BYTES}`);
      await unchanged();
    });
  });

  describe('more requests than --max-inflight-requests', () => {
    /** Starts a POST whose body arrives only when release() is called. */
    function heldRequest(body: Uint8Array) {
      const bytes = Buffer.from(body);
      let resolveAnswer!: (a: HttpAnswer) => void;
      const answer = new Promise<HttpAnswer>((resolve, reject) => {
        resolveAnswer = resolve;
        const req = http.request(
          `${t.url}/v1/traces`,
          {
            method: 'POST',
            agent: false,
            headers: { 'content-type': PROTOBUF, 'content-length': String(bytes.length) },
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolveAnswer({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
          },
        );
        req.on('error', reject);
        req.write(bytes.subarray(0, 10)); // headers and a first slice: the server is now reading
        held.push(() => req.end(bytes.subarray(10)));
      });
      return answer;
    }
    const held: (() => void)[] = [];

    it('are answered 429 with Retry-After over HTTP and UNAVAILABLE over gRPC, and the held requests still complete', async () => {
      // arrange: fill every slot with a request whose body is slow to arrive
      const traceId = randomTraceId();
      const spans = Array.from({ length: MAX_INFLIGHT }, () => ({ traceId, spanId: randomSpanId() }));
      const answers = spans.map((s) => heldRequest(traceBody([s], 'protobuf')));
      // act: another request, until the server has taken up the held ones (an empty request
      // that gets in meanwhile changes nothing)
      let busy: HttpAnswer | undefined;
      for (let i = 0; i < 100 && !busy; i++) {
        const probe = await postOtlp(t, 'traces', Buffer.alloc(0), PROTOBUF);
        if (probe.status === 429) busy = probe;
        else await new Promise((r) => setTimeout(r, 20));
      }
      const grpcBusy = await grpcExport(t.grpcAddress, 'traces', Buffer.alloc(0));
      const jsonBusy = await postOtlp(t, 'traces', '{}', JSON_TYPE);
      // assert: busy, retryable, said plainly
      expect(busy?.status).toBe(429);
      expect(Number(busy!.headers['retry-after'])).toBeGreaterThan(0);
      expect(readStatus(busy!.body, 'protobuf')).toEqual({
        code: UNAVAILABLE,
        message: `too many export requests in flight (limit ${MAX_INFLIGHT}); retry shortly`,
      });
      expect(jsonBusy.status).toBe(429);
      expect(readStatus(jsonBusy.body, 'json').message).toMatch(/too many export requests in flight/);
      expect(grpcBusy.code).toBe(UNAVAILABLE);
      expect(grpcBusy.details).toBe(`too many export requests in flight (limit ${MAX_INFLIGHT}); retry shortly`);
      expect(grpcBusy.metadata?.get('retry-after')).toEqual(['1']);
      await unchanged();
      // act: the held bodies arrive
      for (const release of held.splice(0)) release();
      // assert: they complete, and the server serves on
      expect((await Promise.all(answers)).map((a) => a.status)).toEqual(Array(MAX_INFLIGHT).fill(200));
      expect((await readSpanRows(t.db, [traceId])).map((r) => r.span_id).sort()).toEqual(
        spans.map((s) => s.spanId).sort(),
      );
      expect((await postOtlp(t, 'traces', Buffer.alloc(0), PROTOBUF)).status).toBe(200);
    });
  });

  describe('an empty request', () => {
    it.each([
      ['OTLP/HTTP protobuf traces', () => postOtlp(t, 'traces', Buffer.alloc(0), PROTOBUF), Buffer.alloc(0)],
      ['OTLP/HTTP JSON traces', () => postOtlp(t, 'traces', '{}', JSON_TYPE), Buffer.from('{}')],
      [
        'OTLP/HTTP JSON traces with no spans',
        () => postOtlp(t, 'traces', '{"resourceSpans":[{"scopeSpans":[{"spans":[]}]}]}', JSON_TYPE),
        Buffer.from('{}'),
      ],
      ['OTLP/HTTP protobuf logs', () => postOtlp(t, 'logs', Buffer.alloc(0), PROTOBUF), Buffer.alloc(0)],
      ['OTLP/HTTP JSON logs', () => postOtlp(t, 'logs', '{}', JSON_TYPE), Buffer.from('{}')],
    ] as const)(
      'over %s is answered 200 with an empty response, and nothing is stored',
      async (_door, send, expected) => {
        const answer = await send();
        expect(answer.status).toBe(200);
        expect(answer.body).toEqual(expected);
        await unchanged();
      },
    );

    it.each(['traces', 'logs'] as const)('over gRPC (%s) is answered OK, and nothing is stored', async (signal) => {
      const answer = await grpcExport(t.grpcAddress, signal, Buffer.alloc(0));
      expect(answer.code).toBe(0);
      expect(answer.response).toEqual(Buffer.alloc(0));
      await unchanged();
    });
  });
});
