/**
 * Redelivery is harmless, and an export is acknowledged only after its rows
 * are committed.
 *
 * Scope: the delivery contract of the running server, on each database kind: the same
 * request twice (same door, other door, concurrently) stores each span and log record once;
 * the acknowledgement waits for the commit (a wrapper holds every commit back for a while, so
 * an early acknowledgement could not go unnoticed); and, after the Collector's contract
 * checker, a stream of requests under injected retryable database failures ends with every
 * span stored exactly once, each failure having been reported to the sender as retryable.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Database, DatabaseUnavailableError } from '../../src/store/database.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  grpcExport,
  JSON_TYPE,
  postOtlp,
  PROTOBUF,
  randomSpanId,
  randomTraceId,
  readExportResponse,
  readSpanRows,
  startTestTapedeck,
  traceBody,
  type TestTapedeck,
  START_TIMEOUT_MS,
} from '../helpers/tapedeck-server.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A database whose transactions can be made to wait before COMMIT, or to fail. */
interface ControlledDb {
  wrap(db: Database): Database;
  /** hold each commit back this long (0: none) */
  commitDelayMs: number;
  /** decides, per transaction, whether it fails and where; null: it does not */
  fail: (() => 'before' | 'after-writes' | null) | null;
  events: string[];
}

function controlledDb(): ControlledDb {
  const control: ControlledDb = {
    commitDelayMs: 0,
    fail: null,
    events: [],
    wrap: (db) => ({
      ...db,
      async transaction(fn) {
        const failure = control.fail?.() ?? null;
        if (failure === 'before') throw new DatabaseUnavailableError('injected: connection refused');
        const value = await db.transaction(async (tx) => {
          const result = await fn(tx);
          if (failure === 'after-writes') throw new DatabaseUnavailableError('injected: connection lost before COMMIT');
          if (control.commitDelayMs > 0) {
            control.events.push('written');
            await sleep(control.commitDelayMs);
          }
          return result;
        });
        if (control.commitDelayMs > 0) control.events.push('committed');
        return value;
      },
    }),
  };
  return control;
}

async function spanCount(db: Database, traceId: string): Promise<number> {
  const [row] = await db.query<{ n: bigint }>('SELECT count(*) AS n FROM tapedeck.spans WHERE trace_id = $1', [
    traceId,
  ]);
  return Number(row.n);
}

function logsBody(traceId: string, spanId: string): Uint8Array {
  const { ExportLogsServiceRequest: R } = otlpTypes();
  const record = (body: string) => ({
    timeUnixNano: '1700000000000000100',
    observedTimeUnixNano: '1700000000000000200',
    severityNumber: 9,
    eventName: 'gen_ai.user.message',
    body: { stringValue: body },
    traceId: Buffer.from(traceId, 'hex'),
    spanId: Buffer.from(spanId, 'hex'),
  });
  return R.encode(
    R.fromObject({
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'ingest-test' } }] },
          // two identical records in one request are two records; the resent request adds none
          scopeLogs: [
            { scope: { name: 'ingest-test' }, logRecords: [record('hello'), record('hello'), record('bye')] },
          ],
        },
      ],
    }),
  ).finish();
}

describe.each(databaseKinds)('delivery (%s)', (kind) => {
  let t: TestTapedeck;
  const control = controlledDb();
  beforeAll(async () => {
    // no background recall indexer: its transactions would be counted and delayed as ingest's
    t = await startTestTapedeck(kind, {}, { wrapDb: control.wrap });
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    control.fail = null;
    await t?.close();
  });

  describe('of the same data more than once', () => {
    const spansOf = (traceId: string, n: number) =>
      Array.from({ length: n }, () => ({ traceId, spanId: randomSpanId() }));

    it.each([
      ['OTLP/HTTP protobuf', 'protobuf'],
      ['OTLP/HTTP JSON', 'json'],
      ['OTLP/gRPC', 'grpc'],
    ] as const)('stores each span once when the same request arrives twice over %s', async (_door, how) => {
      // arrange
      const traceId = randomTraceId();
      const body = traceBody(spansOf(traceId, 4), how === 'json' ? 'json' : 'protobuf');
      const send = async () => {
        if (how === 'grpc') return (await grpcExport(t.grpcAddress, 'traces', body)).code === 0;
        return (await postOtlp(t, 'traces', body, how === 'json' ? JSON_TYPE : PROTOBUF)).status === 200;
      };
      // act
      const first = await send();
      const second = await send();
      // assert
      expect([first, second]).toEqual([true, true]);
      expect(await spanCount(t.db, traceId)).toBe(4);
    });

    it('stores each span once when one request arrives through every door and five times at once', async () => {
      // arrange
      const traceId = randomTraceId();
      const spans = spansOf(traceId, 6);
      const pb = traceBody(spans, 'protobuf');
      // act
      const answers = await Promise.all([
        ...Array.from({ length: 5 }, () => postOtlp(t, 'traces', pb, PROTOBUF).then((a) => a.status)),
        postOtlp(t, 'traces', traceBody(spans, 'json'), JSON_TYPE).then((a) => a.status),
        grpcExport(t.grpcAddress, 'traces', pb).then((a) => (a.code === 0 ? 200 : a.code)),
      ]);
      // assert
      expect(answers).toEqual(Array(7).fill(200));
      const rows = await readSpanRows(t.db, [traceId]);
      expect(rows.map((r) => r.span_id).sort()).toEqual(spans.map((s) => s.spanId).sort());
    });

    it('stores each span once when one request holds every span twice', async () => {
      // Two protobuf messages of one type, concatenated, are one message with the repeated
      // fields of both: here, every resource (and so every span) twice.
      const traceId = randomTraceId();
      const spans = spansOf(traceId, 3);
      const once = traceBody(spans, 'protobuf');
      const answer = await postOtlp(t, 'traces', Buffer.concat([once, once]), PROTOBUF);
      expect(answer.status).toBe(200);
      expect(readExportResponse('traces', answer.body, 'protobuf')).toEqual({ rejected: 0, errorMessage: '' });
      expect((await readSpanRows(t.db, [traceId])).map((r) => r.span_id).sort()).toEqual(
        spans.map((s) => s.spanId).sort(),
      );
    });

    it('stores each log record once when the same logs request arrives twice, and keeps identical records of one request', async () => {
      // arrange
      const traceId = randomTraceId();
      const spanId = randomSpanId();
      await postOtlp(t, 'traces', traceBody([{ traceId, spanId }], 'protobuf'), PROTOBUF);
      const body = logsBody(traceId, spanId);
      // act
      const answers = [await postOtlp(t, 'logs', body, PROTOBUF), await postOtlp(t, 'logs', body, PROTOBUF)];
      // assert
      expect(answers.map((a) => a.status)).toEqual([200, 200]);
      const rows = await t.db.query<{ body: string }>(
        'SELECT body FROM tapedeck.logs WHERE trace_id = $1 AND span_id = $2 ORDER BY body',
        [traceId, spanId],
      );
      expect(rows.map((r) => r.body)).toEqual(['bye', 'hello', 'hello']);
    });
  });

  describe('the acknowledgement', () => {
    const COMMIT_DELAY_MS = 400;

    it.each(['OTLP/HTTP', 'OTLP/gRPC'] as const)(
      'over %s is not sent before the rows are committed and visible',
      async (door) => {
        // arrange
        const traceId = randomTraceId();
        const body = traceBody(
          Array.from({ length: 3 }, () => ({ traceId, spanId: randomSpanId() })),
          'protobuf',
        );
        control.events = [];
        control.commitDelayMs = COMMIT_DELAY_MS;
        // A second connection, independent of tapedeck's pool: what any other reader would see.
        // PGlite is one connection inside this process: there is no other connection to look
        // from, and its queue makes every other query wait until the transaction has ended, so
        // there the check is the order of events and the rows being there once acknowledged.
        const observer = t.databaseUrl ? new pg.Client({ connectionString: t.databaseUrl }) : undefined;
        await observer?.connect();
        const visible = async () =>
          observer
            ? Number(
                (await observer.query('SELECT count(*) AS n FROM tapedeck.spans WHERE trace_id = $1', [traceId]))
                  .rows[0].n,
              )
            : spanCount(t.db, traceId);
        try {
          // act
          const started = Date.now();
          const answered = (
            door === 'OTLP/HTTP'
              ? postOtlp(t, 'traces', body, PROTOBUF).then((a) => a.status === 200)
              : grpcExport(t.grpcAddress, 'traces', body).then((a) => a.code === 0)
          ).then(async (ok) => {
            control.events.push('acknowledged');
            // checked the moment the acknowledgement arrives, before anything else runs
            return { ok, visibleAtAck: await visible(), elapsed: Date.now() - started };
          });
          let visibleBeforeCommit: number | undefined;
          if (observer) {
            while (!control.events.includes('written')) await sleep(5);
            visibleBeforeCommit = await visible();
          }
          const outcome = await answered;
          // assert
          expect(outcome.ok).toBe(true);
          expect(control.events).toEqual(['written', 'committed', 'acknowledged']);
          expect(outcome.elapsed).toBeGreaterThanOrEqual(COMMIT_DELAY_MS);
          expect(outcome.visibleAtAck).toBe(3);
          if (observer) expect(visibleBeforeCommit).toBe(0); // written, not committed, not acknowledged
        } finally {
          control.commitDelayMs = 0;
          await observer?.end();
        }
      },
    );
  });

  describe('under injected database failures, after the Collector contract checker', () => {
    it('ends with every span stored exactly once: each request was either acknowledged after storing or refused as retryable and resent', async () => {
      // arrange: a seeded generator, so a failure is reproducible
      let seed = 20_240_601;
      const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
      control.fail = () => {
        const r = random();
        return r < 0.2 ? 'before' : r < 0.4 ? 'after-writes' : null;
      };
      const traceId = randomTraceId();
      const requests = Array.from({ length: 24 }, () =>
        Array.from({ length: 5 }, () => ({ traceId, spanId: randomSpanId() })),
      );
      let refused = 0;
      // act: senders that retry a retryable refusal, as OTLP exporters do
      await Promise.all(
        requests.map(async (spans, i) => {
          const body = traceBody(spans, 'protobuf');
          for (let attempt = 0; ; attempt++) {
            expect(attempt, 'a request is retried at most 30 times').toBeLessThan(30);
            if (i % 2 === 0) {
              const a = await postOtlp(t, 'traces', body, PROTOBUF);
              if (a.status === 200) {
                expect(readExportResponse('traces', a.body, 'protobuf').rejected).toBe(0);
                break;
              }
              expect(a.status).toBe(503);
              expect(Number(a.headers['retry-after'])).toBeGreaterThan(0);
            } else {
              const a = await grpcExport(t.grpcAddress, 'traces', body);
              if (a.code === 0) break;
              expect(a.code).toBe(14); // UNAVAILABLE
            }
            refused++;
          }
          // acknowledged: from now on these spans must be there
          const stored = await readSpanRows(t.db, [traceId]);
          const ids = new Set(stored.map((r) => r.span_id));
          for (const s of spans) expect(ids.has(s.spanId), `acknowledged span ${s.spanId}`).toBe(true);
        }),
      );
      control.fail = null;
      // assert
      expect(refused).toBeGreaterThan(0);
      const rows = await readSpanRows(t.db, [traceId]);
      expect(rows.map((r) => r.span_id).sort()).toEqual(
        requests
          .flat()
          .map((s) => s.spanId)
          .sort(),
      );
    });
  });
});
