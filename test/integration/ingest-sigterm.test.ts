/**
 * `tapedeck serve` as operators run it: the built CLI (dist/, what `npm start` runs) on
 * embedded PGlite in a temporary data directory, on free ports chosen through the
 * environment. It prints its endpoints and where the data lives; on SIGTERM it stops
 * accepting, lets the request in flight finish and be acknowledged, then exits 0, with
 * that request's spans committed to disk.
 *
 * `npm test` builds dist/ first (pretest); run alone, this file builds it when it is
 * missing or older than the sources.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { BIN as CLI, buildCli } from '../helpers/cli.js';
import {
  PROTOBUF,
  postOtlp,
  randomSpanId,
  randomTraceId,
  traceBody,
  type HttpAnswer,
} from '../helpers/tapedeck-server.js';

interface Served {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function serve(dataDir: string): Served {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    TAPEDECK_DATA_DIR: dataDir,
    TAPEDECK_HOST: '127.0.0.1',
    TAPEDECK_HTTP_PORT: '0',
    TAPEDECK_GRPC_PORT: '0',
    TAPEDECK_SHUTDOWN_GRACE_MS: '20000',
  };
  delete env.TAPEDECK_DATABASE_URL;
  const child = spawn(process.execPath, [CLI, 'serve'], { cwd: dataDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

async function until(condition: () => boolean, what: string, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A POST on a keep-alive connection, as exporters send, whose body arrives when release() is called. */
function heldPost(url: string, body: Uint8Array, agent: http.Agent): { answer: Promise<HttpAnswer>; release(): void } {
  const bytes = Buffer.from(body);
  let release!: () => void;
  const answer = new Promise<HttpAnswer>((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': PROTOBUF, 'content-length': String(bytes.length) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.write(bytes.subarray(0, 16));
    release = () => req.end(bytes.subarray(16));
  });
  return { answer, release };
}

describe('tapedeck serve (the built CLI)', () => {
  let dataDir: string;
  let served: Served | undefined;

  beforeAll(async () => {
    await buildCli();
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-serve-'));
  }, 180_000);
  afterAll(async () => {
    if (served && served.child.exitCode === null) {
      served.child.kill('SIGKILL');
      await served.exited;
    }
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('prints its endpoints and data location, and on SIGTERM finishes the request in flight, then exits 0', async () => {
    // arrange: a running server
    served = serve(dataDir);
    // Generous: a first PGlite start compiles its WASM and runs initdb, slow on a busy machine.
    await until(
      () => /\n {2}data .*\n/.test(served!.stdout()) || served!.child.exitCode !== null,
      'the start-up banner',
      150_000,
    ).catch((error: Error) => {
      throw new Error(`${error.message}; stderr: ${served!.stderr()}`);
    });
    const banner = served.stdout();
    expect(banner, served.stderr()).toContain('tapedeck is running');
    const grpcPort = Number(/OTLP\/gRPC\s+127\.0\.0\.1:(\d+)/.exec(banner)?.[1]);
    const httpPort = Number(/OTLP\/HTTP\s+http:\/\/127\.0\.0\.1:(\d+)\/v1\/traces/.exec(banner)?.[1]);
    expect(grpcPort).toBeGreaterThan(0);
    expect(httpPort).toBeGreaterThan(0);
    expect(banner).toMatch(
      new RegExp(`data\\s+${path.join(dataDir, 'pglite').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n`),
    );
    const url = `http://127.0.0.1:${httpPort}`;
    expect((await fetch(`${url}/readyz`)).status).toBe(200);

    // arrange: a request in flight, its body half sent
    const traceId = randomTraceId();
    const spans = Array.from({ length: 3 }, () => ({ traceId, spanId: randomSpanId() }));
    const agent = new http.Agent({ keepAlive: true });
    const inFlight = heldPost(`${url}/v1/traces`, traceBody(spans, 'protobuf'), agent);
    await new Promise((r) => setTimeout(r, 300)); // the server is now reading its body

    // act: SIGTERM
    served.child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    // assert: still running, draining, no longer accepting
    expect(served.child.exitCode).toBeNull();
    await expect(postOtlp({ url }, 'traces', Buffer.alloc(0), PROTOBUF)).rejects.toThrow(/ECONNREFUSED/);

    // act: the rest of the body arrives
    inFlight.release();
    // assert: acknowledged, then a clean exit, well within the grace period
    const answer = await inFlight.answer;
    expect(answer.status).toBe(200);
    const answeredAt = Date.now();
    expect(await served.exited).toBe(0);
    // Promptly: the exporter's idle keep-alive connection does not hold the exit until the
    // server's keep-alive timeout (5 s) runs out.
    expect(Date.now() - answeredAt).toBeLessThan(4_000);
    agent.destroy();
    expect(served.stdout()).toContain('tapedeck stopped');
    expect(served.stderr()).not.toContain('grace period over');

    // assert: what was acknowledged is on disk
    const db = await createPgliteDatabase(path.join(dataDir, 'pglite'));
    try {
      const rows = await db.query<{ span_id: string }>(
        'SELECT span_id FROM tapedeck.spans WHERE trace_id = $1 ORDER BY span_id',
        [traceId],
      );
      expect(rows.map((r) => r.span_id)).toEqual(spans.map((s) => s.spanId).sort());
    } finally {
      await db.close();
    }
  }, 240_000);
});
