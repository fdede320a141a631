/**
 * A read that needs an offloaded value the filesystem payload store cannot read (an I/O
 * fault; here the payload's file replaced by a directory, which fails the read as a real
 * file system error) answers 503 unavailable with Retry-After, naming no path, and reads
 * again once the fault is cleared. Over HTTP to a running tapedeck.
 */
import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFsPayloadStore } from '../../src/payloads/fs-payload-store.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  JSON_TYPE,
  postOtlp,
  randomSpanId,
  randomTraceId,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
  traceBody,
} from '../helpers/tapedeck-server.js';

const THRESHOLD = 1024;

/** Every file under dir, recursively. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true, recursive: true });
  return entries.filter((e) => e.isFile()).map((e) => path.join(e.parentPath, e.name));
}

describe.each(databaseKinds)('a payload store that cannot be read (%s)', (kind) => {
  let t: TestTapedeck;
  let dir: string;
  const run = `payload-fault-${randomTraceId().slice(0, 8)}`;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'tapedeck-payload-read-'));
    t = await startTestTapedeck(
      kind,
      { payloadThresholdBytes: THRESHOLD },
      { payloads: createFsPayloadStore({ dir }) },
    );
    const prompt = JSON.stringify([{ role: 'user', content: 'où est la gare? '.repeat(THRESHOLD) }]);
    const spans = [
      {
        traceId: randomTraceId(),
        spanId: randomSpanId(),
        name: 'chat gpt-4o-mini',
        attributes: {
          'session.id': run,
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.input.messages': prompt,
        },
      },
    ];
    expect((await postOtlp(t, 'traces', traceBody(spans, 'json'), JSON_TYPE)).status).toBe(200);
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await t?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('answers 503 unavailable with Retry-After while the payload cannot be read, then reads it', async () => {
    // arrange: the offloaded prompt's file becomes a directory
    const files = await filesUnder(dir);
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      await rename(file, `${file}.aside`);
      await mkdir(file);
    }
    try {
      // act
      const res = await fetch(`${t.url}/v1/tapes/${run}?resolve=true`);
      // assert
      expect([res.status, res.headers.get('retry-after'), await res.text()]).toEqual([
        503,
        '1',
        '{"error":{"message":"the payload store is unavailable; retry later","type":"unavailable"}}',
      ]);
    } finally {
      for (const file of files) {
        await rm(file, { recursive: true });
        await rename(`${file}.aside`, file);
      }
    }
    const again = await fetch(`${t.url}/v1/tapes/${run}?resolve=true`);
    expect(again.status).toBe(200);
    expect(await again.text()).toContain('où est la gare?');
  });
});
