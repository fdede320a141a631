/**
 * After a normalizer fix (NORMALIZER_VERSION raised), steps stored before keep the old
 * reading until `tapedeck reindex`: serve says so when it starts, and only then.
 */
import { Writable } from 'node:stream';
import os from 'node:os';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultConfig } from '../../src/config.js';
import { NORMALIZER_VERSION } from '../../src/normalize/normalize.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { startTapedeck } from '../../src/server.js';
import { reindex } from '../../src/tapes/reindex.js';
import { createTestDatabase, type TestDatabase } from '../helpers/databases.js';

function recordingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  return { logger: pino({ level: 'info' }, sink), lines };
}

async function serveOnce(t: TestDatabase): Promise<string[]> {
  const { logger, lines } = recordingLogger();
  const config = { ...defaultConfig, host: '127.0.0.1', httpPort: 0, grpcPort: 0, dataDir: os.tmpdir() };
  // serve closes its database on the way out; this one is the test's, opened again below
  const db = { ...t.db, close: async () => {} };
  const running = await startTapedeck(config, logger, { db, payloads: createMemoryPayloadStore() });
  await running.close();
  return lines.filter((l) => l.level === 40).map((l) => l.msg);
}

const insertStep = (t: TestDatabase, version: number) =>
  t.db.query(
    `INSERT INTO tapedeck_store.steps (trace_id, span_id, kind, name, status, fingerprint, layout, normalizer_version)
   VALUES ('\\x0102'::bytea, $1::bytea, 'llm', 'chat', 'ok', 'llm:chat#0', 'otel-genai', $2)`,
    [Buffer.from([version]), version],
  );

describe('serve and steps of an older normalizer', () => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.drop();
    t = undefined;
  });

  it('warns at start, naming reindex, when a stored step is older than this normalizer', async () => {
    t = await createTestDatabase('pglite');
    await insertStep(t, NORMALIZER_VERSION);
    expect(await serveOnce(t)).toEqual([]);
    await insertStep(t, NORMALIZER_VERSION - 1);
    const warnings = await serveOnce(t);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('tapedeck reindex');
    expect(warnings[0]).toContain(`version ${NORMALIZER_VERSION}`);
  }, 60_000);

  it('warns at start while a migration says the stored steps need reindex, until reindex runs', async () => {
    t = await createTestDatabase('pglite');
    await t.db.query("INSERT INTO tapedeck_store.reindex_needed (reason) VALUES ('words are hashes now')");
    const warnings = await serveOnce(t);
    expect(warnings).toEqual(['stored steps need `tapedeck reindex`: words are hashes now']);
    await reindex(t.db, async (spans) => spans.map(() => ({ ownRun: null, ownParentRun: null, step: null })));
    expect(await serveOnce(t)).toEqual([]);
  }, 60_000);
});
