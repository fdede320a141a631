/**
 * Migration 0022 on a store written by the version before it (steps naming their messages by
 * SHA-256 digest, bytea[]), on PGlite and PostgreSQL: every list names the same messages in the
 * same order by id (bigint[]), the views and tapes read the same, and the store goes on as one
 * written now: ingest finds the messages it holds by their ids, and erasing a run deletes the
 * messages no remaining step references.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { prepareErasure, chooseSpans, eraseChosen } from '../../src/erasure/erase-rows.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { silentLogger } from '../../src/logger.js';
import { openStore, type Store } from '../../src/open-store.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { messagesWithAnswersWholeSql, stepsWithDigestListsSql } from '../helpers/digest-lists.js';
import { copyRows, databaseBefore } from '../helpers/store-before.js';
import { conversationSpans } from '../helpers/conversation-spans.js';

const CALLS = 4;
const SYSTEM = 'You plan train journeys.';

/** A run of CALLS model calls, each resending the history; runs with the same first question share messages. */
function conversation(run: string, firstQuestion: string) {
  return conversationSpans({
    run,
    system: SYSTEM,
    questions: Array.from({ length: CALLS }, (_, i) => (i === 0 ? firstQuestion : `${run}: then ${i}?`)),
    answer: (i) => `${run}: change at stop ${i}.`,
  });
}

/** Each step's lists as the digests of the messages they name, in order. */
const listsByDigest = (db: Store['db']) =>
  db.query(
    `SELECT st.tenant, encode(st.span_id, 'hex') AS span_id,
            pg_typeof(st.request_messages)::text AS type,
            (SELECT array_agg(encode(m.digest, 'hex') ORDER BY u.n)
               FROM unnest(st.request_messages) WITH ORDINALITY AS u(id, n)
               JOIN tapedeck_store.messages m ON m.tenant = st.tenant AND m.id = u.id) AS request,
            (SELECT array_agg(encode(m.digest, 'hex') ORDER BY u.n)
               FROM unnest(st.response_messages) WITH ORDINALITY AS u(id, n)
               JOIN tapedeck_store.messages m ON m.tenant = st.tenant AND m.id = u.id) AS response
       FROM tapedeck_store.steps st ORDER BY 1, 2`,
  );

const count = async (db: Store['db'], sql: string) => Number((await db.query<{ n: bigint }>(sql))[0].n);

describe.each(databaseKinds)('migration 0022 (messages by id) on %s', (kind) => {
  let now: TestDatabase;
  let before: TestDatabase;
  let nowStore: Store;
  let store: Store;
  const config = loadConfig({});

  beforeAll(async () => {
    now = await createTestDatabase(kind);
    nowStore = await openStore(config, silentLogger(), { db: now.db, payloads: createMemoryPayloadStore() });
    await ingestSpans(conversation('left', 'Lyon to Turin?'), { tenant: '' }, nowStore.ingest);
    await ingestSpans(conversation('right', 'Lyon to Turin?'), { tenant: '' }, nowStore.ingest);
    await ingestSpans(conversation('other', 'Lyon to Turin?'), { tenant: 'acme' }, nowStore.ingest);
    // The same rows as the version before 0022 wrote them: lists of digests, messages without
    // ids, answers whole.
    before = await databaseBefore(kind, 'message_ids');
    await copyRows(now.db, before.db, 'spans', 'SELECT row_to_json(s)::text AS j FROM tapedeck_store.spans s');
    // in another order than they were stored: ids need not follow the order of the digests
    await copyRows(now.db, before.db, 'messages', messagesWithAnswersWholeSql(" - 'id'", 'ORDER BY body DESC'));
    await copyRows(now.db, before.db, 'steps', stepsWithDigestListsSql());
    const [{ type }] = await before.db.query<{ type: string }>(
      `SELECT format_type(atttypid, atttypmod) AS type FROM pg_attribute
        WHERE attrelid = 'tapedeck_store.steps'::regclass AND attname = 'request_messages'`,
    );
    expect(type).toBe('bytea[]');
    store = await openStore(config, silentLogger(), { db: before.db, payloads: createMemoryPayloadStore() });
  }, 240_000);
  afterAll(async () => {
    await now?.drop();
    await before?.drop();
  });

  it('names the same messages in the same order, by id', async () => {
    const lists = await listsByDigest(before.db);
    expect(lists.length).toBe(3 * CALLS);
    expect(lists.every((l) => (l as { type: string }).type === 'bigint[]')).toBe(true);
    expect(lists).toEqual(await listsByDigest(now.db));
    // every message has an id of its own
    expect(await count(before.db, 'SELECT count(DISTINCT id) AS n FROM tapedeck_store.messages')).toBe(
      await count(before.db, 'SELECT count(*) AS n FROM tapedeck_store.messages'),
    );
  });

  it('reads the same views and tapes', async () => {
    const views = (db: Store['db']) =>
      Promise.all([
        db.query('SELECT * FROM tapedeck.tape_steps ORDER BY trace_id, span_id'),
        db.query('SELECT * FROM tapedeck.step_messages ORDER BY trace_id, span_id, side, position'),
      ]);
    expect(await views(before.db)).toEqual(await views(now.db));
    for (const [tenant, run] of [
      ['', 'left'],
      ['', 'right'],
      ['acme', 'other'],
    ])
      expect(await readTape(store, tenant, run)).toEqual(await readTape(nowStore, tenant, run));
  });

  it('keeps its message lists indexed without a pending list, as a store made now', async () => {
    const indexes = (db: Store['db']) =>
      db.query(
        `SELECT c.relname, pg_get_indexdef(c.oid) AS def FROM pg_class c
          WHERE c.relname IN ('steps_request_messages_idx', 'steps_response_messages_idx', 'messages_id_key')
          ORDER BY 1`,
      );
    const made = await indexes(before.db);
    expect(made).toHaveLength(3);
    expect(made).toEqual(await indexes(now.db));
    expect(made.filter((i) => String((i as { def: string }).def).includes('fastupdate=off'))).toHaveLength(2);
  });

  it('goes on as a store written now: ingest reuses the messages it holds, erasure deletes the unreferenced', async () => {
    const messages = () => count(before.db, 'SELECT count(*) AS n FROM tapedeck_store.messages');
    const held = await messages();
    // a new run opening as left and right did: its system prompt and first question are held
    await ingestSpans(conversation('again', 'Lyon to Turin?'), { tenant: '' }, store.ingest);
    // its questions after the first and its answers, each once though resent as history
    const own = CALLS - 1 + CALLS;
    expect(await messages()).toBe(held + own);
    const again = await readTape(store, '', 'again');
    expect(again?.steps.at(-1)?.request).toHaveLength(1 + 2 * CALLS - 1);

    const erase = (run: string) =>
      before.db.transaction(async (tx) => {
        await prepareErasure(tx);
        await chooseSpans(tx, "s.tenant = '' AND s.run_id = $1", [run]);
        await eraseChosen(tx);
      });
    await erase('again');
    expect(await messages()).toBe(held);
    await erase('left');
    await erase('right');
    // the tenant acme's run alone is left, with every message it names
    expect(await messages()).toBe(
      await count(before.db, "SELECT count(*) AS n FROM tapedeck_store.messages WHERE tenant = 'acme'"),
    );
    expect(await readTape(store, 'acme', 'other')).toEqual(await readTape(nowStore, 'acme', 'other'));
  });
});
