/**
 * Payload store backends against the one contract, and what only the PostgreSQL table
 * backend promises. The pg backend runs on every entry of databaseKinds (PGlite always, the
 * real server when TAPEDECK_TEST_DATABASE_URL is set). Filesystem-only behaviour (layout,
 * temporary files) is in test/unit/payloads/fs-payload-store.test.ts.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { describePayloadStoreContract } from '../contracts/payload-store.contract.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { createFsPayloadStore } from '../../src/payloads/fs-payload-store.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { createPgPayloadStore } from '../../src/payloads/pg-payload-store.js';
import { parsePayloadRef, payloadRefOf } from '../../src/payloads/payload-store.js';

describePayloadStoreContract('filesystem', async () => {
  const dir = await mkdtemp(path.join(tmpdir(), 'tapedeck-payloads-'));
  return {
    store: createFsPayloadStore({ dir }),
    async corrupt(ref, bytes) {
      const { hex } = parsePayloadRef(ref);
      await writeFile(path.join(dir, 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex), bytes);
    },
    cleanup: () => rm(dir, { recursive: true, force: true }),
  };
});

describePayloadStoreContract('memory', async () => {
  const entries = new Map<string, Uint8Array>();
  return {
    store: createMemoryPayloadStore({ entries }),
    async corrupt(ref, bytes) {
      entries.set(ref, bytes);
    },
    cleanup: async () => {},
  };
});

// One migrated database per kind for the whole contract run, emptied before each test:
// creating and migrating a database per test would cost seconds each for no extra coverage.
for (const kind of databaseKinds) {
  describe(kind, () => {
    let shared: Promise<TestDatabase> | undefined;
    afterAll(async () => (await shared)?.drop());
    describePayloadStoreContract(`postgresql table on ${kind}`, async () => {
      const t = await (shared ??= createTestDatabase(kind));
      await t.db.query('DELETE FROM tapedeck_store.payloads');
      return {
        store: createPgPayloadStore({ db: t.db }),
        async corrupt(ref, bytes) {
          await t.db.query('UPDATE tapedeck_store.payloads SET bytes = $2 WHERE digest = $1', [
            ref,
            Buffer.from(bytes),
          ]);
        },
        cleanup: async () => {},
      };
    });
  });
}

describe.each(databaseKinds)('postgresql payload table on %s', (kind) => {
  let t: TestDatabase | undefined;
  afterEach(async () => {
    await t?.drop();
    t = undefined;
  });
  const bytes = new TextEncoder().encode('[{"content":"hello","role":"user"}]');
  const ref = payloadRefOf(bytes);

  it('records size and media type beside the bytes', async () => {
    t = await createTestDatabase(kind);
    await createPgPayloadStore({ db: t.db }).put(bytes, 'application/json');
    const rows = await t.db.query('SELECT digest, size_bytes, media_type FROM tapedeck_store.payloads');
    expect(rows).toEqual([{ digest: ref, size_bytes: BigInt(bytes.byteLength), media_type: 'application/json' }]);
  });

  it('treats a metadata-only row (bytes NULL) as absent, fills it on put, and never deletes it', async () => {
    t = await createTestDatabase(kind);
    const store = createPgPayloadStore({ db: t.db });
    await t.db.query('INSERT INTO tapedeck_store.payloads (digest, size_bytes, bytes) VALUES ($1, $2, NULL)', [
      ref,
      bytes.byteLength,
    ]);
    expect(await store.has(ref)).toBe(false);
    expect(await store.get(ref)).toBeUndefined();
    expect(await store.delete(ref)).toBe(false);
    expect(await t.db.query('SELECT 1 FROM tapedeck_store.payloads WHERE digest = $1', [ref])).toHaveLength(1);
    await store.put(bytes);
    expect(await store.get(ref)).toEqual(bytes);
  });

  it('repairs bytes of the wrong length on the next put of the right bytes', async () => {
    t = await createTestDatabase(kind);
    const store = createPgPayloadStore({ db: t.db });
    await store.put(bytes);
    await t.db.query("UPDATE tapedeck_store.payloads SET bytes = '\\x00'::bytea WHERE digest = $1", [ref]);
    await store.put(bytes);
    expect(await store.get(ref)).toEqual(bytes);
  });

  it("writes inside the caller's transaction: a rollback takes the payload with it", async () => {
    t = await createTestDatabase(kind);
    const failure = new Error('roll back');
    await expect(
      t.db.transaction(async (tx) => {
        await createPgPayloadStore({ db: tx }).put(bytes);
        throw failure;
      }),
    ).rejects.toBe(failure);
    expect(await createPgPayloadStore({ db: t.db }).has(ref)).toBe(false);
  });
});
