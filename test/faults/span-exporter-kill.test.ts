/**
 * The in-process TapedeckSpanExporter in an application killed with SIGKILL: an application
 * (support/exporting-app.mjs, a child process on the built package) exports uniquely
 * identified chat spans through it and says which exports were acknowledged; it is killed
 * at different points of its exports and started again, five times on PostgreSQL (two on
 * embedded PGlite, whose every start takes seconds and takes over the killed process's data
 * directory). Afterwards every span an export acknowledged is stored exactly once with its
 * step, nothing is stored twice, and the counts of spans lost and duplicated are printed.
 *
 * Runs on PostgreSQL when TAPEDECK_TEST_DATABASE_URL is set, and always on embedded PGlite.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { createServerDatabase, databaseKinds, type DatabaseKind } from '../helpers/databases.js';
import { CLI } from './support/served-tapedeck.js';
import { describeTally, type Ledger, type Query, type Tally, tally } from './support/span-stream.js';

const APP = path.join(path.dirname(fileURLToPath(import.meta.url)), 'support', 'exporting-app.mjs');
const SENDER = 'tapedeck-span-exporter';
const killsOn = (kind: DatabaseKind) => (kind === 'postgres' ? 5 : 2);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One run of the application; the ledger is filled from what it prints. */
function startApp(env: Record<string, string>, ledger: Ledger, serialBase: number) {
  const child: ChildProcess = spawn(process.execPath, [APP], {
    env: { ...process.env, ...env, FAULTS_SERIAL_BASE: String(serialBase) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let acks = 0;
  let stderr = '';
  child.stderr!.on('data', (c: Buffer) => {
    stderr = (stderr + c.toString('utf8')).slice(-8_000);
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const [what, list] = line.split(' ');
    if (what === 'sent') {
      for (const pair of list.split(',')) {
        const [spanId, traceId] = pair.split(':');
        ledger.set(spanId, { traceId, sender: SENDER, acknowledged: false });
      }
    } else if (what === 'ack') {
      for (const spanId of list.split(',')) ledger.get(spanId)!.acknowledged = true;
      acks++;
    }
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited, acks: () => acks, stderr: () => stderr };
}

describe.each(databaseKinds)('TapedeckSpanExporter in an application killed with SIGKILL (%s)', (kind) => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  const KILLS = killsOn(kind);
  it(`stores every acknowledged span exactly once through ${KILLS} SIGKILLs`, async () => {
    // arrange
    expect(existsSync(CLI), 'the built package (npm run build)').toBe(true);
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-faults-app-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = { FAULTS_DATA_DIR: dataDir };
    let direct: pg.Client | undefined;
    if (kind === 'postgres') {
      const server = await createServerDatabase();
      cleanups.push(server.drop);
      env.FAULTS_DATABASE_URL = server.url;
      direct = new pg.Client({ connectionString: server.url });
      await direct.connect();
      cleanups.push(() => direct!.end());
    }
    const ledger: Ledger = new Map();
    const acknowledgedBy = (app: ReturnType<typeof startApp>, n: number) =>
      (async () => {
        for (const deadline = Date.now() + 120_000; app.acks() < n; await sleep(20)) {
          if (Date.now() > deadline) throw new Error(`no acknowledged exports: ${app.stderr()}`);
        }
      })();

    // act: killed at different points of its exports, started again each time
    let kills = 0;
    for (let k = 0; k < KILLS; k++) {
      const app = startApp(env, ledger, k * 1_000_000);
      cleanups.push(async () => app.child.kill('SIGKILL'));
      await acknowledgedBy(app, 3);
      await sleep(150 + 170 * k);
      app.child.kill('SIGKILL');
      await app.exited;
      kills++;
    }
    const last = startApp(env, ledger, KILLS * 1_000_000);
    cleanups.push(async () => last.child.kill('SIGKILL'));
    await acknowledgedBy(last, 3);
    last.child.kill('SIGTERM');
    expect(await last.exited, last.stderr()).toBe(0);

    // assert
    let counted: Tally;
    if (direct) {
      counted = await tally(ledger, async (sql, params) => (await direct!.query(sql, params)).rows);
    } else {
      const db = await createPgliteDatabase(path.join(dataDir, 'pglite'));
      try {
        counted = await tally(ledger, db.query.bind(db) as Query);
      } finally {
        await db.close();
      }
    }
    console.log(`faults (${kind}): ${describeTally(`TapedeckSpanExporter, ${kills} SIGKILLs`, counted)}`);
    expect(kills).toBe(KILLS);
    expect({ lost: counted.lost, duplicated: counted.duplicated }).toEqual({ lost: 0, duplicated: 0 });
    expect(counted.acknowledged).toBeGreaterThan(0);
    // every batch the application had in flight when killed is all it lost: two senders
    expect(counted.sent - counted.acknowledged).toBeLessThanOrEqual(2 * 10 * KILLS);
  }, 300_000);
});
