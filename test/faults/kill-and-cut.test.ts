/**
 * Nothing acknowledged is lost, nothing is stored twice, while tapedeck is killed and its
 * database goes away. The real OTel JS exporters (exporter-trace-otlp-proto, -http (JSON) and
 * -grpc) send a stream of uniquely identified chat spans to `tapedeck serve` (the built CLI,
 * a child process) while it is killed with SIGKILL five times and started again on the same
 * ports (twice on PGlite, see below) and, on PostgreSQL, while its database connection is cut and restored twice (a TCP
 * proxy between tapedeck and the server closes every connection and refuses new ones for a
 * few seconds). Afterwards every span an exporter reported as acknowledged (SUCCESS for its
 * batch) is stored exactly once with its step, and the counts of spans lost and duplicated
 * are printed.
 *
 * The exporters' retry, as installed (otlp-exporter-base's retrying transport): the HTTP ones
 * retry 429, 502, 503, 504 and connection errors (ECONNREFUSED, ECONNRESET, EPIPE, ...) up to
 * five times, after Retry-After when the answer has one, else after 1 s growing 1.5 times
 * (±20 %, at most 5 s), all within timeoutMillis (30 s here, long enough to outlast a restart).
 * The gRPC exporter does not retry at all: every failed call is a failed batch, which may be
 * absent but must not be stored twice.
 *
 * Runs on PostgreSQL when TAPEDECK_TEST_DATABASE_URL is set (kills and cuts), and always on
 * embedded PGlite in a data directory (kills only: an embedded database has no connection to
 * cut; two kills, not five, as each restart there takes seconds), where each restart also
 * proves that a killed process's data directory opens again by itself.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { createServerDatabase, databaseKinds, type DatabaseKind } from '../helpers/databases.js';
import { PROTOBUF, postOtlp, randomSpanId, randomTraceId, readStatus, traceBody } from '../helpers/tapedeck-server.js';
import { freePort, ServedTapedeck } from './support/served-tapedeck.js';
import { describeTally, startSpanStream, tally, type Query, type Tally } from './support/span-stream.js';
import { TcpProxy } from './support/tcp-proxy.js';

// Five kills on PostgreSQL; two on PGlite, whose every restart (WASM compiled again, the
// killed process's data directory recovered) takes seconds on a small machine.
const killsOn = (kind: DatabaseKind) => (kind === 'postgres' ? 5 : 2);
const CUTS = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(databaseKinds)(
  'tapedeck killed and its database cut, with exporters sending (%s)',
  (kind: DatabaseKind) => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    });

    const KILLS = killsOn(kind);
    it(`stores every acknowledged span exactly once through ${KILLS} SIGKILLs${kind === 'postgres' ? ` and ${CUTS} database cuts` : ''}`, async () => {
      // arrange: tapedeck on fixed ports (through a cuttable proxy on PostgreSQL)
      const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-faults-'));
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      let databaseUrl: string | null = null;
      let proxy: TcpProxy | undefined;
      let direct: pg.Client | undefined;
      if (kind === 'postgres') {
        const server = await createServerDatabase();
        cleanups.push(server.drop);
        const upstream = new URL(server.url);
        proxy = new TcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
        await proxy.restore();
        cleanups.push(() => proxy!.cut());
        databaseUrl = proxy.via(server.url);
        direct = new pg.Client({ connectionString: server.url });
        await direct.connect();
        cleanups.push(() => direct!.end());
      }
      const served = new ServedTapedeck({
        dataDir,
        databaseUrl,
        httpPort: await freePort(),
        grpcPort: await freePort(),
      });
      cleanups.push(() => served.kill());
      await served.start();

      const exporters: Record<string, SpanExporter> = {
        'otlp-proto': new ProtoExporter({ url: `${served.url}/v1/traces`, timeoutMillis: 30_000 }),
        'otlp-http-json': new JsonExporter({ url: `${served.url}/v1/traces`, timeoutMillis: 30_000 }),
        'otlp-grpc': new GrpcExporter({ url: served.grpcUrl, timeoutMillis: 10_000 }),
      };
      const stream = startSpanStream(exporters, { batchSize: 10, sendersPerExporter: 2, pauseMs: 150 });
      let unavailableAnswers = 0;

      // act: kills, each restarted on the same ports while the exporters keep sending
      await sleep(2_000);
      for (let k = 0; k < KILLS; k++) {
        await sleep(2_000 + 300 * k); // lands at different points of the exports in flight
        await served.kill();
        await sleep(500);
        await served.start();
      }
      // act: the database goes away and comes back, tapedeck running throughout
      for (let c = 0; c < CUTS && proxy; c++) {
        await sleep(2_000);
        await proxy.cut();
        await sleep(500);
        const probe = await postOtlp(
          served,
          'traces',
          traceBody([{ traceId: randomTraceId(), spanId: randomSpanId() }], 'protobuf'),
          PROTOBUF,
        );
        expect(probe.status, probe.body.toString()).toBe(503);
        expect(Number(probe.headers['retry-after'])).toBeGreaterThan(0);
        expect(readStatus(probe.body, 'protobuf').code).toBe(14);
        unavailableAnswers++;
        await sleep(2_500);
        await proxy.restore();
      }
      await sleep(2_000);
      await stream.stop();
      await Promise.all(Object.values(exporters).map((e) => e.shutdown()));

      // assert: every acknowledged span stored once, with its step; nothing stored twice
      expect(served.alive).toBe(true);
      let counted: Tally;
      if (direct) {
        counted = await tally(stream.ledger, async (sql, params) => (await direct!.query(sql, params)).rows);
        await served.stop();
      } else {
        await served.stop();
        const db = await createPgliteDatabase(path.join(dataDir, 'pglite'));
        try {
          counted = await tally(stream.ledger, db.query.bind(db) as Query);
        } finally {
          await db.close();
        }
      }
      console.log(
        `faults (${kind}): ${describeTally(`${served.kills} SIGKILLs, ${proxy?.cuts ?? 0} database cuts`, counted)}`,
      );
      expect(served.kills).toBe(KILLS);
      expect(unavailableAnswers).toBe(kind === 'postgres' ? CUTS : 0);
      expect({ lost: counted.lost, duplicated: counted.duplicated }).toEqual({ lost: 0, duplicated: 0 });
      // Each exporter got batches through: the stream ran across the faults, not around them.
      for (const name of Object.keys(exporters)) expect(counted.bySender[name].acknowledged, name).toBeGreaterThan(0);
    }, 300_000);
  },
);
