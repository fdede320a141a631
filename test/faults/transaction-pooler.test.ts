/**
 * Behind a connection pooler in transaction mode that does not keep prepared statements
 * (PgBouncer before 1.21, the one Debian ships), with tapedeck's prepared statements left on
 * as an operator who missed --database-prepared-statements would: the transactions that meet
 * a statement the pooler lost are answered as retryable, tapedeck runs its statements
 * unprepared from then on, and every span the real OTel exporters sent is stored once. Reads
 * go through the pooler as well.
 *
 * The pooler holds one server session, so every connection tapedeck opens shares it and a
 * statement prepared on one is met, prepared already or never prepared, by the others.
 *
 * Scope: PostgreSQL only, where a `pgbouncer` binary is installed (`.ci/run` installs
 * Debian's). It is started on a free port with a configuration of its own.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { OTLPTraceExporter as JsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as ProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { databaseKinds, defaultServerUrl } from '../helpers/databases.js';
import { capturingLogger, START_TIMEOUT_MS, startTestTapedeck } from '../helpers/tapedeck-server.js';
import { freePort } from './support/served-tapedeck.js';
import { startSpanStream, tally } from './support/span-stream.js';

const PGBOUNCER = ['/usr/sbin/pgbouncer', '/usr/bin/pgbouncer'].find((p) => existsSync(p));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** PgBouncer in transaction mode with one server session, in front of `server`. */
async function startPgBouncer(server: URL): Promise<{ port: number; stop(): Promise<void> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-pgbouncer-'));
  const port = await freePort();
  const user = decodeURIComponent(server.username || 'postgres');
  writeFileSync(path.join(dir, 'users.txt'), `"${user}" ""\n`);
  writeFileSync(
    path.join(dir, 'pgbouncer.ini'),
    [
      '[databases]',
      `* = host=${server.hostname} port=${server.port || 5432}`,
      '[pgbouncer]',
      'listen_addr = 127.0.0.1',
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${path.join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      'default_pool_size = 1',
      'max_client_conn = 100',
      '',
    ].join('\n'),
  );
  // PgBouncer will not run as root: as root, it is told to switch to an unprivileged user,
  // which must be able to read its configuration.
  chmodSync(dir, 0o755);
  const asRoot = process.getuid?.() === 0 ? ['-u', 'nobody'] : [];
  const child: ChildProcess = spawn(PGBOUNCER!, [...asRoot, path.join(dir, 'pgbouncer.ini')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr?.on('data', (d: Buffer) => {
    log += d.toString();
  });
  const stop = async () => {
    if (child.exitCode === null) {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  for (let attempt = 0; ; attempt++) {
    const listening = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (listening) return { port, stop };
    if (child.exitCode !== null || attempt > 100) {
      await stop();
      throw new Error(`pgbouncer did not start: ${log}`);
    }
    await sleep(50);
  }
}

describe.skipIf(!databaseKinds.includes('postgres') || !PGBOUNCER)(
  'Behind a pooler in transaction mode that loses prepared statements',
  () => {
    const cleanups: (() => Promise<unknown>)[] = [];
    afterAll(async () => {
      for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
    });

    it(
      'stores every span the exporters sent once, with no failed export, and reads through it',
      async () => {
        // arrange: tapedeck reaching its database through PgBouncer, prepared statements on
        const { logger, lines } = capturingLogger();
        const bouncer = await startPgBouncer(new URL(defaultServerUrl!));
        cleanups.push(() => bouncer.stop());
        const viaBouncer = (url: string) => {
          const u = new URL(url);
          u.port = String(bouncer.port);
          return u.toString();
        };
        const td = await startTestTapedeck('postgres', {}, { connectVia: viaBouncer, logger });
        cleanups.push(() => td.close());
        const direct = new pg.Client({ connectionString: td.databaseUrl });
        await direct.connect();
        cleanups.push(() => direct.end());

        // act: two real exporters, three senders each, so tapedeck works on several
        // connections at once, all through the pooler's one server session
        const exporters: Record<string, SpanExporter> = {
          'otlp-proto': new ProtoExporter({ url: `${td.url}/v1/traces`, timeoutMillis: 30_000 }),
          'otlp-http-json': new JsonExporter({ url: `${td.url}/v1/traces`, timeoutMillis: 30_000 }),
        };
        const stream = startSpanStream(exporters, { batchSize: 10, sendersPerExporter: 3, pauseMs: 20 });
        await sleep(3_000);
        await stream.stop();
        await Promise.all(Object.values(exporters).map((e) => e.shutdown()));
        const recall = await fetch(`${td.url}/v1/recall?q=${encodeURIComponent('question 7')}`);
        const runs = await fetch(`${td.url}/v1/runs?limit=5`);

        // assert: nothing failed for good, nothing lost or stored twice
        const counted = await tally(stream.ledger, async (sql, params) => (await direct.query(sql, params)).rows);
        const answered = stream.answered();
        expect({
          failedExports: Object.values(answered).reduce((n, a) => n + a.failed, 0),
          lost: counted.lost,
          duplicated: counted.duplicated,
        }).toEqual({ failedExports: 0, lost: 0, duplicated: 0 });
        for (const [name, a] of Object.entries(answered)) expect(a.succeeded, name).toBeGreaterThan(5);
        // the pooler did lose a statement: the transactions that met it were answered 503
        const lost = lines.filter((l) => JSON.stringify(l).includes('lost a prepared statement'));
        expect(lost.length).toBeGreaterThan(0);
        expect(lost.every((l) => l.level === 40)).toBe(true);
        expect({ recall: recall.status, runs: runs.status }).toEqual({ recall: 200, runs: 200 });
        const found = (await recall.json()) as { runs: unknown[] };
        expect(found.runs.length).toBeGreaterThan(0);
      },
      START_TIMEOUT_MS,
    );
  },
);
