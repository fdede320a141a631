/**
 * Faults of the storage under ingest, with real parts: a payload directory that cannot be
 * written (read-only or full when the test may mount file systems, as root; otherwise not
 * writable by its owner) answers 503 with Retry-After and stores nothing of the request, then
 * the same request stores in full once it can be written; a span whose derivation throws
 * outside its dialect is stored with no step, logged once for many, and its batch answers 200;
 * PGlite's faults that a retry may cure (a full disk, its lock table full) are unavailable.
 */
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { createFsPayloadStore } from '../../src/payloads/fs-payload-store.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { DatabaseUnavailableError } from '../../src/store/database.js';
import { createDeriveSpans } from '../../src/derive/derive.js';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { migrate } from '../../src/store/migrate.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  capturingLogger,
  countRows,
  JSON_TYPE,
  postOtlp,
  randomSpanId,
  randomTraceId,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
} from '../helpers/tapedeck-server.js';
import { span } from '../helpers/span-builder.js';

const THRESHOLD = 1024;
const canMount = process.getuid?.() === 0 && mountWorks();

function mountWorks(): boolean {
  const probe = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-mount-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', probe], { stdio: 'ignore' });
    execFileSync('umount', [probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
}

const kv = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** An OTLP/JSON trace request of tool spans, each with these arguments. */
function toolSpans(traceId: string, argumentsJson: readonly string[]): string {
  return JSON.stringify({
    resourceSpans: [
      {
        resource: { attributes: [kv('service.name', 'storage-faults')] },
        scopeSpans: [
          {
            scope: { name: 'storage-faults' },
            spans: argumentsJson.map((args, i) => ({
              traceId,
              spanId: randomSpanId(),
              name: 'execute_tool lookup',
              kind: 1,
              startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i) * 1000n),
              endTimeUnixNano: String(1_700_000_000_000_000_500n + BigInt(i) * 1000n),
              attributes: [
                kv('session.id', `faults-${traceId.slice(0, 8)}`),
                kv('gen_ai.operation.name', 'execute_tool'),
                kv('gen_ai.tool.name', 'lookup'),
                kv('gen_ai.tool.call.arguments', args),
              ],
            })),
          },
        ],
      },
    ],
  });
}

async function storedOf(t: TestTapedeck, traceId: string): Promise<{ spans: number; steps: number }> {
  const [row] = await t.db.query<{ spans: number; steps: number }>(
    `SELECT (SELECT count(*) FROM tapedeck_store.spans WHERE trace_id = decode($1, 'hex'))::int AS spans,
            (SELECT count(*) FROM tapedeck_store.steps WHERE trace_id = decode($1, 'hex'))::int AS steps`,
    [traceId],
  );
  return row;
}

/** Makes dir unwritable in a way the running user cannot override; restore() undoes it. */
function unwritable(dir: string, how: 'read-only' | 'full' | 'no permission'): { restore(): void } {
  if (how === 'no permission') {
    const dirs = [
      dir,
      ...readdirSync(dir, { recursive: true, withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => path.join(e.parentPath, e.name)),
    ];
    for (const d of dirs) chmodSync(d, 0o500);
    return { restore: () => dirs.forEach((d) => chmodSync(d, 0o700)) };
  }
  if (how === 'read-only') {
    execFileSync('mount', ['--bind', dir, dir]);
    execFileSync('mount', ['-o', 'remount,ro,bind', dir]);
    return { restore: () => execFileSync('umount', [dir]) };
  }
  // a small file system over the directory, filled up
  execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', dir]);
  try {
    writeFileSync(path.join(dir, 'filler'), Buffer.alloc(1024 * 1024));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
  }
  return { restore: () => execFileSync('umount', [dir]) };
}

const faults: ('read-only' | 'full' | 'no permission')[] = canMount ? ['read-only', 'full'] : ['no permission'];

describe.each(databaseKinds)('storage faults under ingest (%s)', (kind) => {
  let t: TestTapedeck;
  let payloadDir: string;
  const log = capturingLogger();

  beforeAll(async () => {
    payloadDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-payloads-'));
    t = await startTestTapedeck(
      kind,
      { payloadThresholdBytes: THRESHOLD },
      { payloads: createFsPayloadStore({ dir: payloadDir }), logger: log.logger },
    );
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await t?.close();
    rmSync(payloadDir, { recursive: true, force: true });
  });

  it.each(faults)(
    'answers 503 with Retry-After while the payload directory is %s, stores nothing, then stores the retry',
    async (how) => {
      const traceId = randomTraceId();
      const big = JSON.stringify({ query: 'x'.repeat(4 * THRESHOLD) + traceId });
      const body = toolSpans(traceId, [big, '{"q":"small"}']);
      const before = await countRows(t.db);
      const fault = unwritable(payloadDir, how);
      try {
        const answer = await postOtlp(t, 'traces', body, JSON_TYPE);
        expect(answer.status, answer.body.toString()).toBe(503);
        expect(Number(answer.headers['retry-after'])).toBeGreaterThan(0);
        expect(answer.body.toString()).toContain('payload store');
        expect(await countRows(t.db)).toEqual(before);
      } finally {
        fault.restore();
      }
      // nothing half-written: no temporary file is left, no payload file is named
      const incoming = path.join(payloadDir, 'tmp');
      expect(existsSync(incoming) ? readdirSync(incoming).filter((f) => f.endsWith('.tmp')) : []).toEqual([]);
      const retried = await postOtlp(t, 'traces', body, JSON_TYPE);
      expect(retried.status, retried.body.toString()).toBe(200);
      expect(await storedOf(t, traceId)).toEqual({ spans: 2, steps: 2 });
      const tape = await fetch(`${t.url}/v1/tapes/faults-${traceId.slice(0, 8)}?resolve=true`);
      expect(JSON.stringify(await tape.json())).toContain(traceId);
    },
  );

  it('stores a span whose derivation throws with no step, logs once for many, and answers 200', async () => {
    const traceId = randomTraceId();
    // nested deeper than any recursive walk of the value can go
    const deep = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    const warnings = () => log.lines.filter((l) => String(l.msg).includes('as a step'));
    const already = warnings().length;
    const answer = await postOtlp(t, 'traces', toolSpans(traceId, [deep, deep, deep, '{"q":"fine"}']), JSON_TYPE);
    expect(answer.status, answer.body.toString()).toBe(200);
    expect(await storedOf(t, traceId)).toEqual({ spans: 4, steps: 1 });
    // the first is logged at once; the others are counted into one line later
    expect(warnings().length - already).toBe(1);
  });
});

describe('PGlite faults a retry may cure', () => {
  it('its lock table full (53200) is unavailable', async () => {
    const db = await createPgliteDatabase();
    try {
      await expect(
        db.transaction((tx) => tx.query('SELECT pg_advisory_xact_lock(g) FROM generate_series(1, 100000) g')),
      ).rejects.toBeInstanceOf(DatabaseUnavailableError);
      expect(await db.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    } finally {
      await db.close();
    }
  });

  it.skipIf(!canMount)(
    'a full disk under its data directory is unavailable to ingest (503)',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-pglite-full-'));
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=48m', 'tmpfs', dir]);
      const dataDir = path.join(dir, 'pglite');
      mkdirSync(dataDir);
      const db = await createPgliteDatabase(dataDir);
      try {
        await migrate(db);
        try {
          writeFileSync(path.join(dir, 'filler'), Buffer.alloc(64 * 1024 * 1024));
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        }
        const payloads = createMemoryPayloadStore();
        const derive = createDeriveSpans({ payloads }, { payloadThresholdBytes: 256 * 1024 });
        const spans = Array.from({ length: 2000 }, (_, i) =>
          span({ id: `s${i}`, traceId: randomTraceId(), attributes: { note: 'y'.repeat(2000) } }),
        );
        const error = await ingestSpans(spans, { tenant: '' }, { db, derive }).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(IngestError);
        expect((error as IngestError).kind).toBe('unavailable');
      } finally {
        await db.close();
        execFileSync('umount', [dir]);
        rmSync(dir, { recursive: true, force: true });
      }
    },
    120_000,
  );
});
