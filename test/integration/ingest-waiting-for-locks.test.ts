/**
 * A request whose traces another transaction holds derives its steps while it waits, as new
 * spans without log records (ingest/write-spans.ts). When the holder stored one of its spans
 * meanwhile, that span is known as stored once the locks are granted: the request derives
 * again and restates that span's step, storing what one request carrying them all stores. On a
 * PostgreSQL server (PGlite has one connection: nothing waits).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { writeSpans } from '../../src/ingest/write-spans.js';
import { conversationSpans } from '../helpers/conversation-spans.js';
import { databaseKinds } from '../helpers/databases.js';
import { advisoryWaiter, holdTransaction } from '../helpers/held-locks.js';
import { countingTransactions, startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const onServer = databaseKinds.includes('postgres');
const STEPS = `SELECT * FROM tapedeck.tape_steps ORDER BY trace_id, span_id`;

describe.skipIf(!onServer)('a request waiting for its traces on postgres', () => {
  let waiting: TestTapedeck;
  let reference: TestTapedeck;
  beforeAll(async () => {
    waiting = await startTestTapedeck('postgres');
    reference = await startTestTapedeck('postgres');
  });
  afterAll(async () => {
    await waiting?.close();
    await reference?.close();
  });

  it('stores what one request stores, the span stored meanwhile restated', async () => {
    const spans = conversationSpans({
      run: 'lyon',
      system: 'You answer questions about trains.',
      questions: ['Which platform for Lyon?', 'And for Dijon?', 'When does it leave?', 'Is there a later one?'],
      answer: (i) => `Platform ${i + 3}.`,
    });
    const deps = waiting.running.store.ingest;
    // another transaction stores the first call under its trace's locks, and holds them
    const holder = await holdTransaction(waiting.db, (tx) =>
      writeSpans(tx, [spans[0]], '', { derive: deps.derive!, chunked: deps.chunked ?? null }),
    );
    // the request's transactions: a second one would be the INSERT path after a failed COPY
    const { db, count } = countingTransactions(deps.db);
    const request = ingestSpans(spans, { tenant: '' }, { ...deps, db });
    await advisoryWaiter(waiting.db);
    await holder.release();
    expect((await request).stored).toBe(spans.length - 1);
    // derived again under the locks, not stored by the INSERT path after a failed COPY
    expect(count.transactions).toBe(1);

    await ingestSpans(spans, { tenant: '' }, reference.running.store.ingest);
    const stored = await waiting.db.query(STEPS);
    expect(stored).toHaveLength(spans.length);
    expect(stored).toEqual(await reference.db.query(STEPS));
  });
});
