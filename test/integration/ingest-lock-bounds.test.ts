/**
 * Advisory locks per transaction are bounded: four Collector-sized batches (8,192 spans, each
 * span its own short trace) sent at once all store, where a lock per trace would take 32,768
 * locks at once from a lock table of max_locks_per_transaction (64 by default) x connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds } from '../helpers/databases.js';
import {
  countRows,
  postOtlp,
  PROTOBUF,
  randomSpanId,
  randomTraceId,
  START_TIMEOUT_MS,
  startTestTapedeck,
  traceBody,
  type TestTapedeck,
} from '../helpers/tapedeck-server.js';

const BATCH = 8192;
const BATCHES = 4;

describe.each(databaseKinds)('advisory locks under large batches of short traces (%s)', (kind) => {
  let t: TestTapedeck;

  beforeAll(async () => {
    t = await startTestTapedeck(kind, {}, {});
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await t?.close();
  });

  it(`stores ${BATCHES} concurrent batches of ${BATCH} spans of distinct traces`, async () => {
    if (kind === 'postgres') {
      const [row] = await t.db.query<{ n: string }>("SELECT current_setting('max_locks_per_transaction') AS n");
      // the point of the test: the batches together need far more trace locks than the table has
      expect(BATCH * BATCHES).toBeGreaterThan(Number(row.n) * 100);
    }
    const bodies = Array.from({ length: BATCHES }, () =>
      traceBody(
        Array.from({ length: BATCH }, () => ({ traceId: randomTraceId(), spanId: randomSpanId() })),
        'protobuf',
      ),
    );
    const answers = await Promise.all(bodies.map((body) => postOtlp(t, 'traces', body, PROTOBUF)));
    expect(answers.map((a) => (a.status === 200 ? 200 : `${a.status} ${a.body.toString()}`))).toEqual(
      Array(BATCHES).fill(200),
    );
    expect((await countRows(t.db)).spans).toBe(BATCH * BATCHES);
  }, 240_000);
});
