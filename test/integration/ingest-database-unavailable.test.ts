/**
 * With the database unreachable both transports answer the retryable error,
 * nothing partial is stored, and once it is back the retried request is stored in full.
 *
 * Scope: PostgreSQL only. tapedeck reaches its database through a small TCP proxy in this
 * test, which can be stopped (every connection cut, new ones refused) and started again on
 * the same port, told to cut the connection the moment a COMMIT goes by (after the rows of a
 * request were written inside its transaction), or frozen (connections open, nothing
 * answered: a hung server or a network partition). What was stored is read over a separate,
 * direct connection. Embedded PGlite lives inside the process and cannot become unreachable;
 * it has no such case to test.
 */
import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/databases.js';
import {
  grpcExport,
  postOtlp,
  PROTOBUF,
  JSON_TYPE,
  randomSpanId,
  randomTraceId,
  readExportResponse,
  readStatus,
  startTestTapedeck,
  traceBody,
  type TestTapedeck,
  START_TIMEOUT_MS,
} from '../helpers/tapedeck-server.js';

/** A TCP proxy to the test PostgreSQL server that a test can cut. */
class CuttableProxy {
  private server: net.Server | undefined;
  private readonly sockets = new Set<net.Socket>();
  port = 0;
  /** cut the connection that next sends a COMMIT, instead of forwarding it */
  cutAtCommit = false;
  cuts = 0;
  private frozen = false;

  constructor(private readonly upstream: { host: string; port: number }) {}

  async start(): Promise<void> {
    if (this.server) return;
    const server = net.createServer((client) => this.connect(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.port, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as net.AddressInfo).port;
    this.server = server;
  }

  /** Refuses new connections and cuts every open one. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Keeps every connection open but forwards nothing: a server that stopped answering. */
  freeze(): void {
    this.frozen = true;
    for (const s of this.sockets) s.pause();
  }

  thaw(): void {
    this.frozen = false;
    for (const s of this.sockets) s.resume();
  }

  private connect(client: net.Socket): void {
    const upstream = net.connect(this.upstream.port, this.upstream.host);
    this.sockets.add(client);
    this.sockets.add(upstream);
    if (this.frozen) {
      client.pause();
      upstream.pause();
    }
    const cut = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      // A simple-protocol Query message 'Q' carrying the text COMMIT.
      if (this.cutAtCommit && chunk[0] === 0x51 && chunk.includes('COMMIT')) {
        this.cutAtCommit = false;
        this.cuts++;
        cut();
        return;
      }
      upstream.write(chunk);
    });
    upstream.pipe(client);
    client.on('error', cut);
    upstream.on('error', cut);
    client.on('close', cut);
    upstream.on('close', cut);
  }
}

const hasServer = databaseKinds.includes('postgres');
/** tapedeck's query timeout here: long enough for any insert below, short enough to wait out */
const QUERY_TIMEOUT_MS = 3_000;

describe.runIf(hasServer)('an unreachable database (postgres)', () => {
  let t: TestTapedeck;
  let proxy: CuttableProxy;
  let direct: pg.Client;

  beforeAll(async () => {
    const server = new URL(process.env.TAPEDECK_TEST_DATABASE_URL!);
    proxy = new CuttableProxy({ host: server.hostname, port: Number(server.port || 5432) });
    await proxy.start();
    t = await startTestTapedeck(
      'postgres',
      {},
      {
        pgSettings: { queryTimeoutMillis: QUERY_TIMEOUT_MS },
        connectVia: (url) => {
          const via = new URL(url);
          via.hostname = '127.0.0.1';
          via.port = String(proxy.port);
          return via.toString();
        },
      },
    );
    direct = new pg.Client({ connectionString: t.databaseUrl });
    await direct.connect();
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await direct?.end();
    await proxy?.start(); // let the server's pool say goodbye
    await t?.close();
    await proxy?.stop();
  });

  const stored = async (traceId: string): Promise<string[]> =>
    (
      await direct.query<{ span_id: string }>(
        'SELECT span_id FROM tapedeck.spans WHERE trace_id = $1 ORDER BY span_id',
        [traceId],
      )
    ).rows.map((r) => r.span_id);
  const spansOf = (traceId: string, n: number) =>
    Array.from({ length: n }, () => ({ traceId, spanId: randomSpanId() }));

  it('answers 503 with Retry-After over HTTP and UNAVAILABLE over gRPC, stores nothing, then stores the retried requests in full once it is back', async () => {
    // arrange
    const traces = { pb: randomTraceId(), json: randomTraceId(), grpc: randomTraceId() };
    const spans = { pb: spansOf(traces.pb, 20), json: spansOf(traces.json, 7), grpc: spansOf(traces.grpc, 11) };
    const send = {
      pb: () => postOtlp(t, 'traces', traceBody(spans.pb, 'protobuf'), PROTOBUF),
      json: () => postOtlp(t, 'traces', traceBody(spans.json, 'json'), JSON_TYPE),
      grpc: () => grpcExport(t.grpcAddress, 'traces', traceBody(spans.grpc, 'protobuf')),
    };
    await proxy.stop();
    // act: while it is away
    const [pb, json, grpc, ready] = await Promise.all([send.pb(), send.json(), send.grpc(), fetch(`${t.url}/readyz`)]);
    // assert: retryable, said plainly, nothing stored
    for (const [answer, encoding] of [
      [pb, 'protobuf'],
      [json, 'json'],
    ] as const) {
      expect(answer.status).toBe(503);
      expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
      expect(readStatus(answer.body, encoding)).toEqual({
        code: 14,
        message: 'the database is unavailable; nothing from this request was stored, retry later',
      });
    }
    expect(grpc).toMatchObject({
      code: 14,
      details: 'the database is unavailable; nothing from this request was stored, retry later',
    });
    expect(grpc.metadata?.get('retry-after')).toEqual(['5']);
    expect(ready.status).toBe(503);
    for (const traceId of Object.values(traces)) expect(await stored(traceId)).toEqual([]);

    // act: it comes back, the senders retry
    await proxy.start();
    const retried = await Promise.all([send.pb(), send.json(), send.grpc()]);
    // assert: acknowledged, and stored in full
    expect([retried[0].status, retried[1].status, retried[2].code]).toEqual([200, 200, 0]);
    expect(readExportResponse('traces', retried[0].body, 'protobuf').rejected).toBe(0);
    for (const key of ['pb', 'json', 'grpc'] as const) {
      expect(await stored(traces[key]), key).toEqual(spans[key].map((s) => s.spanId).sort());
    }
    expect((await fetch(`${t.url}/readyz`)).status).toBe(200);
  });

  it.each(['OTLP/HTTP', 'OTLP/gRPC'] as const)(
    'over %s stores nothing of a request whose connection is lost at COMMIT, answers retryable, and stores it whole on retry',
    async (door) => {
      // arrange: a request big enough that its rows were certainly written before COMMIT
      const traceId = randomTraceId();
      const spans = spansOf(traceId, 200);
      const body = traceBody(spans, 'protobuf');
      const send = async () =>
        door === 'OTLP/HTTP'
          ? (await postOtlp(t, 'traces', body, PROTOBUF)).status
          : (await grpcExport(t.grpcAddress, 'traces', body)).code;
      const cutsBefore = proxy.cuts;
      proxy.cutAtCommit = true;
      // act
      const first = await send();
      // assert
      expect(proxy.cuts).toBe(cutsBefore + 1);
      expect(first).toBe(door === 'OTLP/HTTP' ? 503 : 14);
      expect(await stored(traceId)).toEqual([]);
      // act: the sender retries
      const second = await send();
      // assert
      expect(second).toBe(door === 'OTLP/HTTP' ? 200 : 0);
      expect(await stored(traceId)).toEqual(spans.map((s) => s.spanId).sort());
    },
  );

  it('answers retryable when the database stops answering, within the query timeout, and stores the retried request once it answers again', async () => {
    // arrange
    const traceId = randomTraceId();
    const spans = spansOf(traceId, 5);
    const body = traceBody(spans, 'protobuf');
    proxy.freeze();
    try {
      // act
      const started = Date.now();
      const [http, grpc] = await Promise.all([
        postOtlp(t, 'traces', body, PROTOBUF),
        grpcExport(t.grpcAddress, 'traces', body),
      ]);
      // assert: refused as retryable once the query timeout ran out, not left hanging
      expect(http.status).toBe(503);
      expect(Number(http.headers['retry-after'])).toBeGreaterThan(0);
      expect(grpc.code).toBe(14);
      expect(Date.now() - started).toBeLessThan(QUERY_TIMEOUT_MS * 4);
    } finally {
      proxy.thaw();
    }
    expect(await stored(traceId)).toEqual([]);
    // act: the sender retries
    const retried = await postOtlp(t, 'traces', body, PROTOBUF);
    // assert
    expect(retried.status).toBe(200);
    expect(await stored(traceId)).toEqual(spans.map((s) => s.spanId).sort());
  });
  it('answers the read API and the replay routes 503 unavailable with Retry-After while it is away, naming no address', async () => {
    // arrange
    const reads = [
      ['GET', '/v1/runs'],
      ['GET', '/v1/tapes/some-run'],
      ['GET', '/v1/runs/some-run/reconstruct'],
      ['GET', '/v1/runs/some-run/tree'],
      ['GET', '/v1/datasets/chat.jsonl?summary=true'],
      ['GET', '/v1/diff?a=some-run&b=other-run'],
      ['GET', '/v1/recall?q=weather'],
      ['POST', '/v1/replays'],
    ] as const;
    await proxy.stop();
    try {
      // act
      const answers = await Promise.all(
        reads.map(async ([method, path]) => {
          const res = await fetch(`${t.url}${path}`, {
            method,
            ...(method === 'POST'
              ? { body: '{"run":"some-run"}', headers: { 'content-type': 'application/json' } }
              : {}),
          });
          return [path, res.status, res.headers.get('retry-after'), await res.text()];
        }),
      );
      // assert: retryable, never 500, and the database's address stays on the server
      for (const answer of answers) {
        expect(answer).toEqual([
          answer[0],
          503,
          '1',
          '{"error":{"message":"the database is unavailable; retry later","type":"unavailable"}}',
        ]);
      }
    } finally {
      await proxy.start();
    }
    expect((await fetch(`${t.url}/v1/runs`)).status).toBe(200);
  });
});
