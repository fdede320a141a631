/**
 * The in-process TapedeckSpanExporter under a database cut: a stream of uniquely identified
 * chat spans goes through it while its PostgreSQL connection is cut and restored twice (a TCP
 * proxy closes every connection and refuses new ones for a few seconds). An export during a
 * cut waits, retrying, rather than failing: a span processor drops what is reported FAILED.
 * Afterwards every span sent was acknowledged and is stored exactly once with its step.
 *
 * PostgreSQL only (TAPEDECK_TEST_DATABASE_URL, as in CI): embedded PGlite lives inside the
 * process and has no connection to cut.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { TapedeckSpanExporter } from '../../src/exporter/tapedeck-span-exporter.js';
import { createServerDatabase, databaseKinds } from '../helpers/databases.js';
import { describeTally, startSpanStream, tally } from './support/span-stream.js';
import { TcpProxy } from './support/tcp-proxy.js';

const CUTS = 2;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

it.runIf(databaseKinds.includes('postgres'))(
  `TapedeckSpanExporter stores every acknowledged span exactly once through ${CUTS} database cuts (postgres)`,
  async () => {
    // arrange: the exporter opens its own store, through the proxy
    const server = await createServerDatabase();
    cleanups.push(server.drop);
    const upstream = new URL(server.url);
    const proxy = new TcpProxy({ host: upstream.hostname, port: Number(upstream.port || 5432) });
    await proxy.restore();
    cleanups.push(() => proxy.cut());
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-faults-exporter-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const exporter = new TapedeckSpanExporter({ config: { databaseUrl: proxy.via(server.url), dataDir } });
    cleanups.push(() => exporter.shutdown());
    const stream = startSpanStream(
      { 'tapedeck-span-exporter': exporter },
      { batchSize: 10, sendersPerExporter: 2, pauseMs: 50 },
    );

    // act: two cuts; during each no export succeeds, after each they succeed again
    const succeeded = () => stream.answered()['tapedeck-span-exporter'].succeeded;
    const failed = () => stream.answered()['tapedeck-span-exporter'].failed;
    const progress = async (what: string) => {
      const before = succeeded();
      for (const deadline = Date.now() + 60_000; succeeded() < before + 5; await sleep(50)) {
        if (Date.now() > deadline) throw new Error(`no exports succeeded ${what}`);
      }
    };
    await progress('at first');
    for (let c = 0; c < CUTS; c++) {
      await proxy.cut();
      await sleep(1_000); // the exports that were committing when the cut came are answered
      const stalledAt = succeeded();
      await sleep(2_000);
      expect(succeeded(), `exports succeeded during cut ${c + 1}`).toBe(stalledAt);
      await proxy.restore();
      await progress(`after cut ${c + 1}`);
    }
    await stream.stop();
    await exporter.shutdown();

    // assert
    const direct = new pg.Client({ connectionString: server.url });
    await direct.connect();
    try {
      const counted = await tally(stream.ledger, async (sql, params) => (await direct.query(sql, params)).rows);
      console.log(`faults (postgres): ${describeTally(`TapedeckSpanExporter, ${proxy.cuts} database cuts`, counted)}`);
      expect({ lost: counted.lost, duplicated: counted.duplicated }).toEqual({ lost: 0, duplicated: 0 });
      expect([failed(), counted.acknowledged]).toEqual([0, counted.sent]);
    } finally {
      await direct.end();
    }
  },
  120_000,
);
