/**
 * A request holding a trace another transaction writes (a run split between two requests)
 * writes its other traces first and waits only for that one (ingest/write-spans.ts), so such
 * requests work side by side. Two that each hold a trace the other wants wait in a cycle:
 * PostgreSQL ends one, and ingest does it once more with every lock taken first, in order.
 * Either way the store ends as one request carrying every span leaves it. A log request so
 * ended is answered as unavailable, to be retried, having stored nothing. On a PostgreSQL
 * server (PGlite has one connection: nothing waits).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { writeSpans } from '../../src/ingest/write-spans.js';
import { conversationSpans } from '../helpers/conversation-spans.js';
import { databaseKinds } from '../helpers/databases.js';
import { advisoryWaiter, holdTransaction } from '../helpers/held-locks.js';
import { lockTraces, traceLockPair } from '../../src/tapes/trace-store.js';
import {
  JSON_TYPE,
  countingTransactions,
  postOtlp,
  startTestTapedeck,
  type TestTapedeck,
} from '../helpers/tapedeck-server.js';

const onServer = databaseKinds.includes('postgres');
const STEPS = `SELECT * FROM tapedeck.tape_steps ORDER BY trace_id, span_id`;

/** The database URL with every session's deadlock_timeout set to `timeout`. */
function withDeadlockTimeout(timeout: string) {
  return (databaseUrl: string) => {
    const url = new URL(databaseUrl);
    url.searchParams.set('options', `-c deadlock_timeout=${timeout}`);
    return url.toString();
  };
}

/** Two runs, each its own trace, sharing no message (a shared new message would be waited for too). */
function twoRuns() {
  const run = (name: string, city: string) =>
    conversationSpans({
      run: name,
      system: `You answer questions about trains to ${city}.`,
      questions: [
        `Which platform for ${city}?`,
        `When does the ${city} train leave?`,
        `Is there a later one to ${city}?`,
      ],
      answer: (i) => `${city}: platform ${i + 3}.`,
    });
  return [run('lyon', 'Lyon'), run('dijon', 'Dijon')];
}

describe.skipIf(!onServer)('requests sharing a trace on postgres', () => {
  let tapedeck: TestTapedeck;
  let reference: TestTapedeck;
  beforeAll(async () => {
    // PostgreSQL looks for a deadlock once, deadlock_timeout after a backend starts waiting, and
    // ends the backend that finds it. The request waits first, so it is the one ended as long as
    // the holder waits within that time: 4 s leaves room for a loaded machine.
    tapedeck = await startTestTapedeck('postgres', {}, { connectVia: withDeadlockTimeout('4s') });
    reference = await startTestTapedeck('postgres');
  });
  afterAll(async () => {
    await tapedeck?.close();
    await reference?.close();
  });

  /** ingest's dependencies, counting the transactions it opens */
  function counted() {
    const deps = tapedeck.running.store.ingest;
    const { db, count } = countingTransactions(deps.db);
    return { deps: { ...deps, db }, count };
  }

  const deriving = () => ({
    derive: tapedeck.running.store.ingest.derive!,
    chunked: tapedeck.running.store.ingest.chunked ?? null,
  });

  /** the reference stores the spans from one request; both hold every earlier test's too */
  async function expectStoredAsOneRequest(spans: ReturnType<typeof twoRuns>[number]) {
    await ingestSpans(spans, { tenant: '' }, reference.running.store.ingest);
    const stored = await tapedeck.db.query(STEPS);
    expect(stored.length).toBeGreaterThanOrEqual(spans.length);
    expect(stored).toEqual(await reference.db.query(STEPS));
  }

  it('writes its free traces while it waits for the held one', async () => {
    const [lyon, dijon] = twoRuns();
    const holder = await holdTransaction(tapedeck.db, (tx) => writeSpans(tx, [lyon[0]], '', deriving()));
    const { deps, count } = counted();
    const request = ingestSpans([...lyon, ...dijon], { tenant: '' }, deps);
    const pid = await advisoryWaiter(tapedeck.db);
    // waiting for Lyon's trace, it has written Dijon's steps already
    const [{ n }] = await tapedeck.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM pg_locks
        WHERE pid = $1 AND granted AND relation = 'tapedeck_store.steps'::regclass AND mode = 'RowExclusiveLock'`,
      [pid],
    );
    expect(n).toBe(1);
    await holder.release();
    expect((await request).stored).toBe(lyon.length + dijon.length - 1);
    expect(count.transactions).toBe(1);
    await expectStoredAsOneRequest([...lyon, ...dijon]);
  });

  it('does it once more, in order, when two wait for each other', async () => {
    const [lyon, dijon] = twoRuns();
    // holds Lyon's trace; once the request holds Dijon's and waits for Lyon's, wants Dijon's
    const holder = await holdTransaction(tapedeck.db, (tx) => writeSpans(tx, [lyon[0]], '', deriving()));
    const { deps, count } = counted();
    const request = ingestSpans([...lyon.slice(1), ...dijon], { tenant: '' }, deps);
    await advisoryWaiter(tapedeck.db);
    // the request waited first, so its deadlock check runs first and ends its transaction
    await holder.release((tx) => writeSpans(tx, [dijon[0]], '', deriving()));
    expect((await request).stored).toBe(lyon.length - 1 + dijon.length - 1);
    expect(count.transactions).toBe(2);
    await expectStoredAsOneRequest([...lyon, ...dijon]);
  });

  it('answers a log request ended by a deadlock as unavailable, and stores it when resent', async () => {
    // two traces, `first` before `second` in the order every lock is taken
    const [first, second] = [randomBytes(16).toString('hex'), randomBytes(16).toString('hex')].sort((a, b) => {
      const [pa, pb] = [traceLockPair(a), traceLockPair(b)];
      return pa[0] - pb[0] || pa[1] - pb[1];
    });
    const records = [first, second].map((traceId, i) => ({
      timeUnixNano: String(1_700_000_000_000_000_000n + BigInt(i)),
      traceId,
      spanId: randomBytes(8).toString('hex'),
      body: { stringValue: `record ${i} of a deadlocked request` },
    }));
    const body = JSON.stringify({ resourceLogs: [{ resource: {}, scopeLogs: [{ scope: {}, logRecords: records }] }] });
    const stored = async () =>
      (
        await tapedeck.db.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM tapedeck.logs WHERE trace_id IN ($1, $2)`,
          [first, second],
        )
      )[0].n;
    // holds the second trace; once the request holds the first and waits for it, wants the first
    const holder = await holdTransaction(tapedeck.db, (tx) => lockTraces(tx, [second]));
    const answer = postOtlp(tapedeck, 'logs', body, JSON_TYPE);
    await advisoryWaiter(tapedeck.db);
    // the request waited first, so its deadlock check runs first and ends its transaction
    await holder.release((tx) => lockTraces(tx, [first]));
    const refused = await answer;
    expect(refused.status).toBe(503);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(await stored()).toBe(0);
    expect((await postOtlp(tapedeck, 'logs', body, JSON_TYPE)).status).toBe(200);
    expect(await stored()).toBe(2);
  });
});
