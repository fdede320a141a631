/**
 * The receivers' bounds on a running server, over real HTTP and real grpc-js clients: what a
 * request costs is counted in decoded bytes (a small compressed body that decodes large is
 * worked on as large as it decodes), spans and log records per request are bounded, gRPC bounds the calls
 * per connection and the bytes waiting calls hold, a cancelled or expired gRPC call stops
 * waiting, and deflate and zstd bodies are read like gzip ones. The database's transactions
 * can be held at their start, so the tests see how many requests are being worked on at once.
 */
import { readFileSync } from 'node:fs';
import http from 'node:http';
import http2 from 'node:http2';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';
import { deflateRawSync, deflateSync, gzipSync } from 'node:zlib';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { otlpTypes, TRACE_EXPORT_PATH } from '../../src/otlp/proto.js';
import type { Database } from '../../src/store/database.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  grpcExport,
  JSON_TYPE,
  postOtlp,
  PROTOBUF,
  randomSpanId,
  randomTraceId,
  readSpanRows,
  readStatus,
  type HttpAnswer,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
  traceBody,
} from '../helpers/tapedeck-server.js';

// The bounds are the receivers', not the store's: one database kind is enough.
const kind = databaseKinds.includes('postgres') ? 'postgres' : 'pglite';
const MAX_BODY_BYTES = 8 * 1024 * 1024;
const MAX_INFLIGHT = 8;
const MAX_RECORDS = 5;
const RESOURCE_EXHAUSTED = 8;
const UNAVAILABLE = 14;
const zstdFixture = (name: string) => readFileSync(new URL(`../fixtures/zstd/${name}`, import.meta.url));

/** A one-span request whose protobuf is `bytes` long or a little more (one padded attribute). */
function spanOfSize(bytes: number, traceId = randomTraceId()): Uint8Array {
  return traceBody([{ traceId, spanId: randomSpanId(), attributes: { pad: 'x'.repeat(bytes) } }], 'protobuf');
}

describe(`receiver limits (${kind})`, () => {
  let t: TestTapedeck;
  const gate = transactionGate();

  beforeAll(async () => {
    t = await startTestTapedeck(
      kind,
      {
        maxBodyBytes: MAX_BODY_BYTES,
        maxInflightRequests: MAX_INFLIGHT,
        maxRecordsPerRequest: MAX_RECORDS,
        queueTimeoutMs: 30_000,
      },
      { wrapDb: gate.wrap },
    );
  }, START_TIMEOUT_MS);
  // A test that fails while the gate is closed must not leave the next ones' requests held.
  afterEach(() => gate.open());
  afterAll(async () => {
    gate.open();
    await t?.close();
  });

  describe('decoded size', () => {
    it('a small gzip body that decodes past 4 MiB is worked on as the size it decodes to: two at a time, not four', async () => {
      // arrange: four bodies of 5 MiB (two work units each), a few KiB each compressed
      const traceId = randomTraceId();
      const bodies = Array.from({ length: 4 }, () => gzipSync(spanOfSize(5 * 1024 * 1024, traceId)));
      expect(Math.max(...bodies.map((b) => b.length))).toBeLessThan(64 * 1024);
      gate.close();
      // act
      const answers = bodies.map((b) => postOtlp(t, 'traces', b, PROTOBUF, { 'content-encoding': 'gzip' }));
      await gate.waitForHeld(2);
      await new Promise((r) => setTimeout(r, 1_000));
      // assert: the other two wait their turn (four small requests would all be worked on)
      expect(gate.held).toBe(2);
      gate.open();
      expect((await Promise.all(answers)).map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect(await readSpanRows(t.db, [traceId])).toHaveLength(4);
    }, 60_000);

    it('a compressed body that decodes small gives its second unit back, so three are worked on at once', async () => {
      // each takes two units to read, one once decoded: the fourth waits for two to read in
      const traceId = randomTraceId();
      const bodies = Array.from({ length: 4 }, () => gzipSync(spanOfSize(1024, traceId)));
      gate.close();
      const answers = bodies.map((b) => postOtlp(t, 'traces', b, PROTOBUF, { 'content-encoding': 'gzip' }));
      await gate.waitForHeld(3);
      await new Promise((r) => setTimeout(r, 300));
      expect(gate.held).toBe(3);
      gate.open();
      expect((await Promise.all(answers)).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    }, 60_000);
  });

  describe('content encodings', () => {
    const json = zstdFixture('traces.json');
    const fixtureTrace = '7a1f3c5e9b2d4f60a8c1e3b5d7f90214';

    it.each([
      ['deflate', 'deflate', () => deflateSync(json)],
      ['raw deflate', 'deflate', () => deflateRawSync(json)],
      ['zstd', 'zstd', () => zstdFixture('traces.json.zst')],
      ['zstd in two frames', 'zstd', () => zstdFixture('traces-two-frames.json.zst')],
    ] as const)('a %s body is stored', async (_case, coding, encode) => {
      const answer = await postOtlp(t, 'traces', encode(), JSON_TYPE, { 'content-encoding': coding });
      expect(answer.status).toBe(200);
      const stored = await readSpanRows(t.db, [fixtureTrace]);
      expect(stored.map((r) => r.name).sort()).toEqual(['zstd-span-0', 'zstd-span-1', 'zstd-span-2']);
    });

    it('a zstd body that decodes past --max-body-bytes is answered 413 naming the limit', async () => {
      const answer = await postOtlp(t, 'traces', zstdFixture('zeros-16MiB.zst'), PROTOBUF, {
        'content-encoding': 'zstd',
      });
      expect(answer.status).toBe(413);
      expect(readStatus(answer.body, 'protobuf')).toEqual({
        code: RESOURCE_EXHAUSTED,
        message: `request body decompressed exceeds the ${MAX_BODY_BYTES}-byte limit (--max-body-bytes); split the batch; nothing was stored`,
      });
    });

    it('a deflate body that decodes past --max-body-bytes is answered 413', async () => {
      const answer = await postOtlp(t, 'traces', deflateSync(spanOfSize(MAX_BODY_BYTES)), PROTOBUF, {
        'content-encoding': 'deflate',
      });
      expect(answer.status).toBe(413);
    });

    it('an unsupported Content-Encoding is answered 415 naming what is accepted', async () => {
      const answer = await postOtlp(t, 'traces', json, JSON_TYPE, { 'content-encoding': 'br' });
      expect(answer.status).toBe(415);
      expect(readStatus(answer.body, 'json').message).toBe(
        'unsupported Content-Encoding "br": send gzip, deflate, zstd or no encoding',
      );
    });
  });

  describe('records per request', () => {
    const spans = (n: number, traceId: string) =>
      Array.from({ length: n }, () => ({ traceId, spanId: randomSpanId() }));

    it.each(['protobuf', 'json'] as const)(
      'up to --max-records-per-request spans are stored; one more is answered 413 naming the limit and the count (%s)',
      async (encoding) => {
        const contentType = encoding === 'json' ? JSON_TYPE : PROTOBUF;
        const traceId = randomTraceId();
        expect(
          (await postOtlp(t, 'traces', traceBody(spans(MAX_RECORDS, traceId), encoding), contentType)).status,
        ).toBe(200);
        const over = randomTraceId();
        const answer = await postOtlp(t, 'traces', traceBody(spans(MAX_RECORDS + 1, over), encoding), contentType);
        expect(answer.status).toBe(413);
        expect(answer.headers['retry-after']).toBeUndefined();
        expect(readStatus(answer.body, encoding)).toEqual({
          code: RESOURCE_EXHAUSTED,
          message: `the request holds ${MAX_RECORDS + 1} spans, over the limit of ${MAX_RECORDS} per request (--max-records-per-request); split the batch; nothing was stored`,
        });
        expect(await readSpanRows(t.db, [over])).toEqual([]);
      },
    );

    it('spans over the bound in a gzip body, or over gRPC, are refused the same way', async () => {
      const over = randomTraceId();
      const body = traceBody(spans(MAX_RECORDS * 3, over), 'protobuf');
      const gzipped = await postOtlp(t, 'traces', gzipSync(body), PROTOBUF, { 'content-encoding': 'gzip' });
      expect(gzipped.status).toBe(413);
      expect(readStatus(gzipped.body, 'protobuf').message).toMatch(/^the request holds 15 spans, over the limit of 5/);
      const viaGrpc = await grpcExport(t.grpcAddress, 'traces', body);
      expect(viaGrpc.code).toBe(RESOURCE_EXHAUSTED);
      expect(viaGrpc.details).toMatch(/^the request holds 15 spans, over the limit of 5 per request/);
      expect(await readSpanRows(t.db, [over])).toEqual([]);
    });

    it('log records over the bound are answered 413 naming the limit and the count', async () => {
      const { ExportLogsServiceRequest: R } = otlpTypes();
      const record = { timeUnixNano: '1700000000000000001', body: { stringValue: 'event' } };
      const body = R.encode(
        R.fromObject({ resourceLogs: [{ scopeLogs: [{ logRecords: Array(MAX_RECORDS + 2).fill(record) }] }] }),
      ).finish();
      const answer = await postOtlp(t, 'logs', body, PROTOBUF);
      expect(answer.status).toBe(413);
      expect(readStatus(answer.body, 'protobuf').message).toBe(
        `the request holds ${MAX_RECORDS + 2} log records, over the limit of ${MAX_RECORDS} per request (--max-records-per-request); split the batch; nothing was stored`,
      );
    });
  });

  describe('gRPC', () => {
    it('announces at most --max-inflight-requests concurrent streams per connection', async () => {
      const session = http2.connect(t.grpcUrl);
      try {
        const settings = await new Promise<http2.Settings>((resolve) => session.once('remoteSettings', resolve));
        expect(settings.maxConcurrentStreams).toBe(MAX_INFLIGHT);
      } finally {
        session.close();
      }
    });

    it('refuses a call as UNAVAILABLE with Retry-After when waiting calls already hold --max-body-bytes', async () => {
      // arrange: every work unit taken by four small requests held at their transaction
      gate.close();
      const traceId = randomTraceId();
      const working = Array.from({ length: 4 }, () => postOtlp(t, 'traces', spanOfSize(10, traceId), PROTOBUF));
      await gate.waitForHeld(4);
      // act: calls of 3 MiB each wait their turn holding their message: two fit in 8 MiB
      const waiting = [grpcExport(t.grpcAddress, 'traces', spanOfSize(3 << 20, traceId))];
      await new Promise((r) => setTimeout(r, 300));
      waiting.push(grpcExport(t.grpcAddress, 'traces', spanOfSize(3 << 20, traceId)));
      await new Promise((r) => setTimeout(r, 300));
      const refused = await grpcExport(t.grpcAddress, 'traces', spanOfSize(3 << 20, traceId));
      // assert
      expect(refused.code).toBe(UNAVAILABLE);
      expect(refused.details).toMatch(
        new RegExp(
          `^export requests waiting their turn already hold \\d+ bytes \\(limit ${MAX_BODY_BYTES}\\); retry shortly$`,
        ),
      );
      expect(refused.metadata?.get('retry-after')).toEqual(['1']);
      gate.open();
      expect((await Promise.all(working)).map((a) => a.status)).toEqual([200, 200, 200, 200]);
      expect((await Promise.all(waiting)).map((a) => a.code)).toEqual([0, 0]);
      expect(await readSpanRows(t.db, [traceId])).toHaveLength(6);
    }, 60_000);

    it('an OTLP/HTTP request whose sender disconnects while it waits stops waiting and frees its place', async () => {
      // arrange: every work unit taken
      gate.close();
      const traceId = randomTraceId();
      const working = Array.from({ length: 4 }, () => postOtlp(t, 'traces', spanOfSize(10, traceId), PROTOBUF));
      await gate.waitForHeld(4);
      // act: four requests wait, and their senders give up; then four more, which fit under
      // --max-inflight-requests (8) only once those left
      const gone = randomTraceId();
      const leaving = Array.from({ length: 4 }, () => {
        const body = Buffer.from(spanOfSize(10, gone));
        const req = http.request(`${t.url}/v1/traces`, {
          method: 'POST',
          agent: false,
          headers: { 'content-type': PROTOBUF, 'content-length': String(body.length) },
        });
        req.on('error', () => {});
        req.end(body);
        return req;
      });
      await new Promise((r) => setTimeout(r, 300));
      for (const req of leaving) req.destroy();
      await new Promise((r) => setTimeout(r, 300));
      const later = Array.from({ length: 4 }, () => postOtlp(t, 'traces', spanOfSize(10, traceId), PROTOBUF));
      await new Promise((r) => setTimeout(r, 300));
      gate.open();
      // assert
      expect((await Promise.all([...working, ...later])).map((a) => a.status)).toEqual(Array(8).fill(200));
      expect(await readSpanRows(t.db, [gone])).toEqual([]);
    }, 60_000);

    it('a call cancelled or past its deadline while waiting stops waiting, frees its place and stores nothing', async () => {
      // arrange: every work unit taken
      gate.close();
      const traceId = randomTraceId();
      const working = Array.from({ length: 4 }, () => postOtlp(t, 'traces', spanOfSize(10, traceId), PROTOBUF));
      await gate.waitForHeld(4);
      // act: two calls wait, one until its deadline, one until its sender cancels it; then
      // two more requests, which fit under --max-inflight-requests (8) only once those left
      const gone = randomTraceId();
      const client = new grpc.Client(t.grpcAddress, grpc.credentials.createInsecure());
      const call = (deadlineMs: number) => {
        let cancel = () => {};
        const answer = new Promise<grpc.status>((resolve) => {
          const c = client.makeUnaryRequest<Buffer, Buffer>(
            TRACE_EXPORT_PATH,
            (b) => b,
            (b) => b,
            Buffer.from(spanOfSize(10, gone)),
            new grpc.Metadata(),
            { deadline: Date.now() + deadlineMs },
            (error) => resolve(error ? error.code : grpc.status.OK),
          );
          cancel = () => c.cancel();
        });
        return { answer, cancel: () => cancel() };
      };
      const expiring = call(300);
      const cancelled = call(30_000);
      await new Promise((r) => setTimeout(r, 100));
      cancelled.cancel();
      expect(await cancelled.answer).toBe(grpc.status.CANCELLED);
      expect(await expiring.answer).toBe(grpc.status.DEADLINE_EXCEEDED);
      await new Promise((r) => setTimeout(r, 100));
      const later = Array.from({ length: 4 }, () => postOtlp(t, 'traces', spanOfSize(10, traceId), PROTOBUF));
      await new Promise((r) => setTimeout(r, 300));
      gate.open();
      // assert: the later requests were admitted, and the calls that left stored nothing
      expect((await Promise.all([...working, ...later])).map((a) => a.status)).toEqual(Array(8).fill(200));
      client.close();
      expect(await readSpanRows(t.db, [gone])).toEqual([]);
    }, 60_000);
  });
});

describe(`receiver deadlines (${kind})`, () => {
  let t: TestTapedeck;
  const gate = transactionGate();
  const QUEUE_TIMEOUT_MS = 1_500;
  const BODY_TIMEOUT_MS = 500;

  beforeAll(async () => {
    t = await startTestTapedeck(
      kind,
      { queueTimeoutMs: QUEUE_TIMEOUT_MS, bodyTimeoutMs: BODY_TIMEOUT_MS },
      { wrapDb: gate.wrap },
    );
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    gate.open();
    await t?.close();
  });

  it('a body that stalls is answered 503 with Retry-After within --body-timeout-ms, and frees its turn', async () => {
    // arrange: two stalled bodies of unknown length, each a large request: one at a time
    const stalled = [stalledRequest(`${t.url}/v1/traces`), stalledRequest(`${t.url}/v1/traces`)];
    await new Promise((r) => setTimeout(r, 100));
    // act: a request behind them
    const traceId = randomTraceId();
    const behind = postOtlp(t, 'traces', traceBody([{ traceId, spanId: randomSpanId() }], 'protobuf'), PROTOBUF);
    // assert: the stalled ones are answered retryably, and the one behind them is stored
    for (const answer of await Promise.all(stalled.map((s) => s.answer))) {
      expect(answer.status).toBe(503);
      expect(answer.headers['retry-after']).toBe('1');
      expect(readStatus(answer.body, 'protobuf')).toEqual({
        code: UNAVAILABLE,
        message: `request body did not arrive within ${BODY_TIMEOUT_MS} ms (--body-timeout-ms); nothing was stored; retry`,
      });
    }
    expect((await behind).status).toBe(200);
    expect(await readSpanRows(t.db, [traceId])).toHaveLength(1);
  }, 30_000);

  it('a request that waits for its turn longer than --queue-timeout-ms is answered 429 (UNAVAILABLE over gRPC) with Retry-After', async () => {
    gate.close();
    const traceId = randomTraceId();
    const working = Array.from({ length: 4 }, () => postOtlp(t, 'traces', spanOfSize(10, traceId), PROTOBUF));
    await gate.waitForHeld(4);
    const started = Date.now();
    const [overHttp, overGrpc] = await Promise.all([
      postOtlp(t, 'traces', spanOfSize(10, traceId), PROTOBUF),
      grpcExport(t.grpcAddress, 'traces', spanOfSize(10, traceId)),
    ]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(QUEUE_TIMEOUT_MS - 50);
    const message = `no turn to store this export request within ${QUEUE_TIMEOUT_MS} ms (--queue-timeout-ms); retry shortly`;
    expect(overHttp.status).toBe(429);
    expect(overHttp.headers['retry-after']).toBe('1');
    expect(readStatus(overHttp.body, 'protobuf')).toEqual({ code: UNAVAILABLE, message });
    expect(overGrpc.code).toBe(UNAVAILABLE);
    expect(overGrpc.details).toBe(message);
    expect(overGrpc.metadata?.get('retry-after')).toEqual(['1']);
    gate.open();
    expect((await Promise.all(working)).map((a) => a.status)).toEqual([200, 200, 200, 200]);
    expect(await readSpanRows(t.db, [traceId])).toHaveLength(4);
  }, 30_000);

  it('cuts off a sender whose headers have not arrived within 20 s (Node waits 60 s)', async () => {
    const socket = net.connect(Number(new URL(t.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    const started = Date.now();
    socket.write('POST /v1/traces HTTP/1.1\r\nHost: tapedeck\r\nContent-Type: application/x-protobuf\r\n');
    let answer = '';
    socket.on('data', (d: Buffer) => {
      answer += d.toString('latin1');
    });
    socket.on('error', () => {});
    await new Promise((resolve) => {
      socket.once('close', resolve);
      setTimeout(resolve, 27_000);
    });
    const elapsed = Date.now() - started;
    socket.destroy();
    expect(elapsed).toBeGreaterThanOrEqual(19_000);
    expect(elapsed).toBeLessThan(27_000);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  }, 40_000);

  it("keeps an idle connection open past Node's default 5 s keep-alive, for a sender to reuse", async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const post = () =>
      new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
        const body = traceBody([{ traceId: randomTraceId(), spanId: randomSpanId() }], 'protobuf');
        const req = http.request(
          `${t.url}/v1/traces`,
          { method: 'POST', agent, headers: { 'content-type': PROTOBUF, 'content-length': String(body.length) } },
          (res) => {
            res.resume();
            res.on('end', () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    try {
      expect(await post()).toEqual({ status: 200, reused: false });
      await new Promise((r) => setTimeout(r, 6_500));
      expect(await post()).toEqual({ status: 200, reused: true });
    } finally {
      agent.destroy();
    }
  }, 30_000);
});

/**
 * Holds the database's transactions at their start while closed, counting them: a request
 * being worked on shows up here, one waiting its turn does not.
 */
function transactionGate() {
  let opened: Promise<void> = Promise.resolve();
  let open = () => {};
  let held = 0;
  return {
    get held() {
      return held;
    },
    close() {
      opened = new Promise((resolve) => {
        open = resolve;
      });
    },
    open: () => open(),
    async waitForHeld(n: number) {
      while (held < n) await new Promise((r) => setTimeout(r, 20));
    },
    wrap: (db: Database): Database => ({
      ...db,
      async transaction(fn) {
        held++;
        try {
          await opened;
        } finally {
          held--;
        }
        return db.transaction(fn);
      },
    }),
  };
}

/** A chunked POST whose headers and first bytes arrive, and the rest never. */
function stalledRequest(url: string) {
  const req = http.request(url, {
    method: 'POST',
    agent: false,
    headers: { 'content-type': PROTOBUF, 'transfer-encoding': 'chunked' },
  });
  const answer = new Promise<HttpAnswer>((resolve, reject) => {
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on('error', reject);
  });
  req.write(Buffer.from([0x0a, 0x05]));
  return { answer, abort: () => req.destroy() };
}
