/**
 * An unwritable payload directory is a transient fault: while tapedeck cannot write
 * offloaded prompts it answers 503 with Retry-After (nothing of the request stored), and once
 * the directory is writable again the exporters' retries are stored (the real OTLP exporters:
 * protobuf and JSON over HTTP, which retry a 503, and gRPC, which does not retry at all, so
 * its batches refused meanwhile are absent). Every span acknowledged
 * is stored exactly once with its step, every payload a stored step names is on disk whole,
 * and no temporary file is left behind.
 *
 * How the directory is made unwritable: tests often run as root, for whom chmod does not stop
 * a write. As root the payload store's incoming directory (<payloads>/tmp, where every payload
 * is written before it is renamed into place) gets the immutable attribute (chattr +i: no new
 * entries, EPERM, for root too; needs CAP_LINUX_IMMUTABLE and a file system with attributes,
 * as ext4, xfs and tmpfs have). Where chattr is refused, the directory is moved aside and a
 * file takes its place (ENOTDIR) until it is restored. As any other user it loses its write
 * permission (chmod 0500, EACCES).
 *
 * The in-process TapedeckSpanExporter, writing into a store of its own, goes through the same:
 * its exports wait, retrying, while the directory is unwritable, and none fails.
 *
 * Runs on PostgreSQL when TAPEDECK_TEST_DATABASE_URL is set, else on embedded PGlite: the
 * payload directory is on the local file system with either database.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OTLPTraceExporter as GrpcExporter } from '@opentelemetry/exporter-trace-otlp-grpc';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import pg from 'pg';
import { afterAll, expect, it } from 'vitest';
import { TapedeckSpanExporter } from '../../src/exporter/tapedeck-span-exporter.js';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { createServerDatabase, databaseKinds } from '../helpers/databases.js';
import { PROTOBUF, postOtlp, readStatus, traceBody } from '../helpers/tapedeck-server.js';
import { freePort, ServedTapedeck } from './support/served-tapedeck.js';
import { describeTally, startSpanStream, tally, type Query, type Tally } from './support/span-stream.js';

const kind = databaseKinds.includes('postgres') ? 'postgres' : 'pglite';
const THRESHOLD = 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Makes the directory refuse new files; returns what makes it writable again. */
function makeUnwritable(dir: string): () => void {
  if (process.getuid?.() !== 0) {
    chmodSync(dir, 0o500);
    return () => chmodSync(dir, 0o700);
  }
  try {
    execFileSync('chattr', ['+i', dir], { stdio: 'pipe' });
    return () => execFileSync('chattr', ['-i', dir]);
  } catch {
    const aside = `${dir}.aside`;
    renameSync(dir, aside);
    writeFileSync(dir, '');
    return () => {
      rmSync(dir);
      renameSync(aside, dir);
    };
  }
}
let restoreWritable: (() => void) | undefined;

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
});

it(`answers 503 while the payload directory is unwritable, then stores the retries exactly once (${kind})`, async () => {
  // arrange: tapedeck offloading every prompt over 1 KiB
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-faults-payloads-'));
  const incoming = path.join(dataDir, 'payloads', 'tmp');
  cleanups.push(async () => {
    restoreWritable?.();
    rmSync(dataDir, { recursive: true, force: true });
  });
  let direct: pg.Client | undefined;
  let databaseUrl: string | null = null;
  if (kind === 'postgres') {
    const server = await createServerDatabase();
    cleanups.push(server.drop);
    databaseUrl = server.url;
    direct = new pg.Client({ connectionString: server.url });
    await direct.connect();
    cleanups.push(() => direct!.end());
  }
  const served = new ServedTapedeck({
    dataDir,
    databaseUrl,
    httpPort: await freePort(),
    grpcPort: await freePort(),
    env: { TAPEDECK_PAYLOAD_THRESHOLD_BYTES: String(THRESHOLD) },
  });
  cleanups.push(() => served.kill());
  await served.start();
  const exporters: Record<string, SpanExporter> = {
    'otlp-proto': new ProtoExporter({ url: `${served.url}/v1/traces`, timeoutMillis: 30_000 }),
    'otlp-http-json': new JsonExporter({ url: `${served.url}/v1/traces`, timeoutMillis: 30_000 }),
    'otlp-grpc': new GrpcExporter({ url: served.grpcUrl, timeoutMillis: 10_000 }),
  };
  const stream = startSpanStream(exporters, {
    batchSize: 10,
    sendersPerExporter: 2,
    pauseMs: 100,
    promptBytes: 4 * THRESHOLD,
  });
  const until = async (condition: () => boolean, what: string) => {
    for (const deadline = Date.now() + 60_000; !condition(); await sleep(50)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  };
  await until(() => stream.answered()['otlp-proto'].succeeded >= 4, 'the first acknowledged exports');
  expect(existsSync(incoming)).toBe(true);

  // act: the payload directory refuses writes for a while
  restoreWritable = makeUnwritable(incoming);
  let probe: Awaited<ReturnType<typeof postOtlp>>;
  try {
    await sleep(500);
    const big = 'an offloaded prompt that cannot be written '.repeat(THRESHOLD / 16);
    probe = await postOtlp(
      served,
      'traces',
      traceBody(
        [
          {
            traceId: 'fa17fa17fa17fa17fa17fa17fa17fa17',
            spanId: 'fa17fa17fa17fa17',
            name: 'chat gpt-4o-mini',
            attributes: {
              'gen_ai.operation.name': 'chat',
              'gen_ai.request.model': 'gpt-4o-mini',
              'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: big }] }]),
            },
          },
        ],
        'protobuf',
      ),
      PROTOBUF,
    );
    await sleep(3_000);
  } finally {
    restoreWritable();
    restoreWritable = undefined;
  }
  await sleep(6_000); // past the Retry-After of the exports refused meanwhile
  await stream.stop();
  await Promise.all(Object.values(exporters).map((e) => e.shutdown()));

  // assert: refused as retryable, nothing of the probe stored
  expect(probe.status, probe.body.toString()).toBe(503);
  expect(Number(probe.headers['retry-after'])).toBeGreaterThan(0);
  expect(readStatus(probe.body, 'protobuf').code).toBe(14);
  expect(served.alive).toBe(true);
  const query: Query = direct
    ? async (sql, params) => (await direct!.query(sql, params)).rows
    : async () => {
        throw new Error('PGlite is read once tapedeck has stopped');
      };
  let counted: Tally;
  let probeRows: number;
  let requests: string[];
  const read = async (q: Query) => {
    counted = await tally(stream.ledger, q);
    probeRows = (
      await q("SELECT count(*)::int AS n FROM tapedeck.spans WHERE trace_id = 'fa17fa17fa17fa17fa17fa17fa17fa17'", [])
    )[0].n as number;
    requests = (await q('SELECT request::text AS request FROM tapedeck_store.steps', [])).map((r) => String(r.request));
  };
  if (direct) {
    await read(query);
    await served.stop();
  } else {
    await served.stop();
    const db = await createPgliteDatabase(path.join(dataDir, 'pglite'));
    try {
      await read(db.query.bind(db) as Query);
    } finally {
      await db.close();
    }
  }
  console.log(`faults (${kind}): ${describeTally('payload directory unwritable for 3.5 s', counted!)}`);
  expect(probeRows!).toBe(0);
  // assert: every acknowledged span stored once with its step; the refused ones retried
  expect({ lost: counted!.lost, duplicated: counted!.duplicated }).toEqual({ lost: 0, duplicated: 0 });
  for (const name of Object.keys(exporters)) expect(counted!.bySender[name].acknowledged, name).toBeGreaterThan(0);
  // assert: every payload a step names is on disk, whole; no temporary file left
  const refs = new Set(requests!.flatMap((r) => r.match(/sha256\/[0-9a-f]{64}/g) ?? []));
  expect(refs.size).toBeGreaterThanOrEqual(counted!.acknowledged);
  for (const ref of refs) {
    const hex = ref.slice('sha256/'.length);
    const file = path.join(dataDir, 'payloads', 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex);
    expect(existsSync(file), ref).toBe(true);
    expect(statSync(file).size, ref).toBeGreaterThan(THRESHOLD);
  }
  expect(readdirSync(incoming)).toEqual([]);
}, 240_000);

it(`TapedeckSpanExporter waits out an unwritable payload directory and stores every span exactly once (${kind})`, async () => {
  // arrange: the in-process exporter opens its own store, offloading every prompt over 1 KiB
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-faults-exporter-payloads-'));
  const incoming = path.join(dataDir, 'payloads', 'tmp');
  cleanups.push(async () => {
    restoreWritable?.();
    rmSync(dataDir, { recursive: true, force: true });
  });
  let direct: pg.Client | undefined;
  let databaseUrl: string | null = null;
  if (kind === 'postgres') {
    const server = await createServerDatabase();
    cleanups.push(server.drop);
    databaseUrl = server.url;
    direct = new pg.Client({ connectionString: server.url });
    await direct.connect();
    cleanups.push(() => direct!.end());
  }
  const exporter = new TapedeckSpanExporter({ config: { databaseUrl, dataDir, payloadThresholdBytes: THRESHOLD } });
  cleanups.push(() => exporter.shutdown());
  const stream = startSpanStream(
    { 'tapedeck-span-exporter': exporter },
    { batchSize: 10, sendersPerExporter: 2, pauseMs: 100, promptBytes: 4 * THRESHOLD },
  );
  const answered = () => stream.answered()['tapedeck-span-exporter'];
  const until = async (condition: () => boolean, what: string) => {
    for (const deadline = Date.now() + 60_000; !condition(); await sleep(50)) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    }
  };
  await until(() => answered().succeeded >= 4, 'the first acknowledged exports');
  expect(existsSync(incoming)).toBe(true);

  // act: the payload directory refuses writes for a while; the exports wait rather than fail
  restoreWritable = makeUnwritable(incoming);
  let stalled: boolean;
  try {
    await sleep(1_000);
    const before = answered().succeeded;
    await sleep(2_500);
    stalled = answered().succeeded === before;
  } finally {
    restoreWritable();
    restoreWritable = undefined;
  }
  const resumed = answered().succeeded;
  await until(() => answered().succeeded >= resumed + 4, 'exports after the directory is writable again');
  await stream.stop();
  await exporter.shutdown();

  // assert: nothing failed, nothing lost, nothing twice, no temporary file left
  expect(stalled).toBe(true);
  let counted: Tally;
  if (direct) {
    counted = await tally(stream.ledger, async (sql, params) => (await direct!.query(sql, params)).rows);
  } else {
    const db = await createPgliteDatabase(path.join(dataDir, 'pglite'));
    try {
      counted = await tally(stream.ledger, db.query.bind(db) as Query);
    } finally {
      await db.close();
    }
  }
  console.log(
    `faults (${kind}): ${describeTally('TapedeckSpanExporter, payload directory unwritable for 3.5 s', counted)}`,
  );
  expect({ lost: counted.lost, duplicated: counted.duplicated }).toEqual({ lost: 0, duplicated: 0 });
  expect([answered().failed, counted.acknowledged]).toEqual([0, counted.sent]);
  expect(readdirSync(incoming)).toEqual([]);
}, 240_000);
