/**
 * The read API and the replay routes each work on a bounded number of requests at once
 * (--read-concurrency, --replay-concurrency): a few more wait, each at most
 * --read-queue-timeout-ms; past that a request is answered 429 busy with Retry-After, and
 * ingest, health and the other kind of request are not held up by it. Reads are held in
 * the database here (a gate in front of the spans table) to fill the slots on purpose.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, QueryOptions } from '../../src/store/database.js';
import { databaseKinds } from '../helpers/databases.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

describe.each(databaseKinds)('read and replay bounds on %s', (kind) => {
  let t: TestTapedeck;
  let gate: Promise<void> | null = null;
  let openGate = (): void => {};
  let held = 0;
  const closeGate = (): void => {
    held = 0;
    gate = new Promise<void>((resolve) => {
      openGate = () => {
        gate = null;
        resolve();
      };
    });
  };
  const gated = (db: Database): Database => ({
    ...db,
    query: async <Row>(sql: string, params?: readonly unknown[], options?: QueryOptions) => {
      if (gate && sql.includes('tapedeck_store.spans')) {
        held++;
        await gate;
      }
      return db.query<Row>(sql, params, options);
    },
  });
  const until = async (condition: () => boolean) => {
    for (let i = 0; i < 200 && !condition(); i++) await new Promise((r) => setTimeout(r, 10));
    expect(condition()).toBe(true);
  };
  const answer = async (res: Promise<Response>) => {
    const r = await res;
    const body = (await r.json()) as { error?: { type: string; message: string } };
    return { status: r.status, retryAfter: r.headers.get('retry-after'), error: body.error };
  };

  beforeAll(async () => {
    t = await startTestTapedeck(
      kind,
      { readConcurrency: 1, replayConcurrency: 1, readQueueTimeoutMs: 400 },
      { wrapDb: gated },
    );
  });
  afterAll(async () => {
    openGate();
    await t?.close();
  });

  it('answers 429 busy with Retry-After past the read bound; waiting ends at the queue timeout', async () => {
    closeGate();
    const first = fetch(`${t.url}/v1/tapes/held`);
    await until(() => held === 1);
    const waiting = [1, 2, 3, 4].map(() => fetch(`${t.url}/v1/runs`));
    const refused = await answer(fetch(`${t.url}/v1/recall?q=weather`));
    expect(refused).toMatchObject({ status: 429, retryAfter: '1', error: { type: 'busy' } });
    expect(refused.error?.message).toMatch(/too many read requests at once .*--read-concurrency/);
    // health, replays and ingest are not read requests
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${t.url}/v1/replays/rp_unknown`)).status).toBe(404);
    for (const w of await Promise.all(waiting.map(answer))) {
      expect(w).toMatchObject({ status: 429, retryAfter: '1', error: { type: 'busy' } });
      expect(w.error?.message).toMatch(/no read slot came free within 400 ms/);
    }
    openGate();
    expect((await first).status).toBe(404);
    expect((await fetch(`${t.url}/v1/runs`)).status).toBe(200);
  });

  it('a waiting read starts when the slot frees', async () => {
    closeGate();
    const first = fetch(`${t.url}/v1/tapes/held`);
    await until(() => held === 1);
    const second = fetch(`${t.url}/v1/runs`);
    await new Promise((r) => setTimeout(r, 50));
    openGate();
    expect((await first).status).toBe(404);
    expect((await second).status).toBe(200);
  });

  it('bounds replay requests apart from reads', async () => {
    closeGate();
    const creating = fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run: 'held' }),
    });
    await until(() => held === 1);
    const waiting = [1, 2, 3, 4].map(() => fetch(`${t.url}/v1/replays/rp_unknown`));
    const refused = await answer(fetch(`${t.url}/v1/replays/rp_unknown`));
    expect(refused).toMatchObject({ status: 429, retryAfter: '1', error: { type: 'busy' } });
    expect(refused.error?.message).toMatch(/too many replay requests at once .*--replay-concurrency/);
    openGate();
    expect((await fetch(`${t.url}/v1/runs`)).status).toBe(200); // reads have their own slots
    expect((await creating).status).toBe(404);
    for (const w of await Promise.all(waiting)) expect(w.status).toBe(404);
  });
});
