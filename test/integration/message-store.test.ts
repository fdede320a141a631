/**
 * The message store (0020_message_store.sql), on PGlite and PostgreSQL: a conversation that
 * resends its history on every call stores each distinct message once, its steps hold the
 * digests in order, and the tape API and the SQL views read the lists exactly as they were
 * sent. Erasing a run deletes the messages no remaining step references; a message two runs
 * share stays until the last of them is erased. A store written before the message store
 * (the migrations before it, steps holding their lists as text) reads the same after the
 * migration moves the lists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { migrate } from '../../src/store/migrate.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { withFinishReason } from '../../src/tapes/answer-turns.js';
import { databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { copyRows, databaseBefore } from '../helpers/store-before.js';
import { conversationSpans } from '../helpers/conversation-spans.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const SYSTEM = 'You answer questions about trains, in one sentence.';
const CALLS = 5;
const RESPONSE_SQL =
  'tapedeck_store.step_body(st.tenant, st.response, st.response_messages, st.response_finish_reasons)';
/** right's answers: text JSON escapes, and more than ASCII */
const rightAnswer = (i: number) => `right: "platform" ${i + 1} \\ at 10:0${i}.\n\u0001 北京 🚆`;

/** A run of CALLS model calls, each sending the whole history so far plus a new question. */
function conversation(
  run: string,
  firstQuestion: string,
  answer = (i: number) => `${run}: platform ${i + 1}, at 10:0${i}.`,
) {
  return conversationSpans({
    run,
    system: SYSTEM,
    questions: [firstQuestion, ...Array.from({ length: CALLS - 1 }, (_, i) => `${run}: and stop ${i + 2}?`)],
    answer,
  });
}

describe.each(databaseKinds)('the message store on %s', (kind) => {
  let t: TestTapedeck;
  const count = async (sql: string, params: unknown[] = []) =>
    Number((await t.db.query<{ n: bigint }>(sql, params))[0].n);

  beforeAll(async () => {
    t = await startTestTapedeck(kind, {}, {});
    await ingestSpans(conversation('left', 'Which platform for Lyon?'), { tenant: '' }, t.running.store.ingest);
    await ingestSpans(
      conversation('right', 'Which platform for Lyon?', rightAnswer),
      { tenant: '' },
      t.running.store.ingest,
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stores each distinct message once, and each step its digests in order', async () => {
    // per run: the system prompt, CALLS questions and CALLS answers, each stored once though
    // all but the last are resent as history (answer-turns.ts); both runs share the first two
    const perRun = 1 + CALLS + CALLS;
    expect(await count('SELECT count(*) AS n FROM tapedeck_store.messages')).toBe(2 * perRun - 2);
    const steps = await t.db.query<{ n: number; request: string | null; response: string | null }>(
      `SELECT cardinality(st.request_messages) AS n, st.request, st.response
         FROM tapedeck_store.steps st JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id)
        WHERE s.run_id = 'left' ORDER BY s.start_ns`,
    );
    // the system prompt, then the history: call i sends 2i + 1 messages of its own
    expect(steps.map((s) => Number(s.n))).toEqual(Array.from({ length: CALLS }, (_, i) => 1 + 2 * i + 1));
    expect(steps.every((s) => s.request === null && s.response === null)).toBe(true);
  });

  it('reads the lists back as they were sent, through the tape API and the views', async () => {
    const tape = (await (await fetch(`${t.url}/v1/tapes/left`)).json()) as {
      steps: { request: { role: string; content: string }[]; response: { content: string }[] }[];
    };
    expect(tape.steps).toHaveLength(CALLS);
    const last = tape.steps[CALLS - 1];
    expect(last.request.map((m) => `${m.role}: ${m.content}`)).toEqual([
      `system: ${SYSTEM}`,
      ...Array.from({ length: CALLS - 1 }, (_, i) => [
        `user: ${i === 0 ? 'Which platform for Lyon?' : `left: and stop ${i + 1}?`}`,
        `assistant: left: platform ${i + 1}, at 10:0${i}.`,
      ]).flat(),
      `user: left: and stop ${CALLS}?`,
    ]);
    expect(last.response).toEqual([
      { role: 'assistant', content: `left: platform ${CALLS}, at 10:0${CALLS - 1}.`, finish_reason: 'stop' },
    ]);
    const [view] = await t.db.query<{ request: unknown; response: unknown }>(
      `SELECT request, response FROM tapedeck.tape_steps WHERE run = 'left' ORDER BY start_ns DESC LIMIT 1`,
    );
    expect(view).toEqual({ request: last.request, response: last.response });
    expect(
      await count(`SELECT count(*) AS n FROM tapedeck.step_messages WHERE run = 'left' AND side = 'request'`),
    ).toBe(Array.from({ length: CALLS }, (_, i) => 2 + 2 * i).reduce((a, b) => a + b));
  });

  it('keeps the step text byte for byte: the list joined back is the canonical JSON the digest names', async () => {
    const rows = await t.db.query<{ body: string; digest: string }>(
      `SELECT tapedeck_store.step_body(st.tenant, st.request, st.request_messages, NULL) AS body,
              encode(sha256(convert_to(tapedeck_store.step_body(st.tenant, st.request, st.request_messages, NULL), 'UTF8')), 'hex') AS digest
         FROM tapedeck_store.steps st JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id)
        WHERE s.run_id = 'left'`,
    );
    const tape = (await (await fetch(`${t.url}/v1/tapes/left`)).json()) as { steps: { request_digest: string }[] };
    // no JSON-shaped text in these prompts: the request digest is the SHA-256 of that text
    expect(new Set(rows.map((r) => r.digest))).toEqual(new Set(tape.steps.map((s) => s.request_digest)));
    expect(rows.every((r) => !r.body.includes(' '.repeat(2)) && r.body.startsWith('[{"content":'))).toBe(true);
  });

  it('gives an answer back its finish_reason, byte for byte, in SQL as in the tape', async () => {
    // right's answers hold quotes, backslashes, control characters and more than ASCII
    const rows = await t.db.query<{ body: string; digest: string }>(
      `SELECT ${RESPONSE_SQL} AS body, encode(sha256(convert_to(${RESPONSE_SQL}, 'UTF8')), 'hex') AS digest
         FROM tapedeck_store.steps st JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id)
        WHERE s.run_id = 'right' ORDER BY s.start_ns`,
    );
    const tape = (await (await fetch(`${t.url}/v1/tapes/right`)).json()) as {
      steps: { response: unknown; response_digest: string }[];
    };
    expect(rows.map((r) => r.digest)).toEqual(tape.steps.map((s) => s.response_digest));
    expect(rows.map((r) => JSON.parse(r.body))).toEqual(tape.steps.map((s) => s.response));
    expect(tape.steps.map((s) => s.response)).toEqual(
      Array.from({ length: CALLS }, (_, i) => [{ role: 'assistant', content: rightAnswer(i), finish_reason: 'stop' }]),
    );
  });

  it('splices a reason into a stored turn in SQL as the tape reader does', async () => {
    const turns = [
      '{"content":"a \\"quoted\\" \\\\ word\\n","role":"assistant"}',
      '{"content":"","role":"assistant"}',
      '{"role":"assistant","tool_calls":[{"arguments":{"content":"x"},"id":"c1","name":"f"}]}',
    ];
    for (const turn of turns)
      for (const reason of ['stop', 'a "reason" \\ with\n a line']) {
        const [row] = await t.db.query<{ text: string }>('SELECT tapedeck_store.with_finish_reason($1, $2) AS text', [
          turn,
          reason,
        ]);
        expect(row.text).toBe(withFinishReason(turn, reason));
      }
  });

  it('erasing a run deletes the messages only it referenced; shared ones stay until the last run goes', async () => {
    const erase = async (run: string) => {
      const res = await fetch(`${t.url}/v1/erasures`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ run }),
      });
      expect(res.status).toBe(202);
    };
    await erase('left');
    // right's own messages, with the two it shared with left
    expect(await count('SELECT count(*) AS n FROM tapedeck_store.messages')).toBe(1 + CALLS + CALLS);
    const tape = (await (await fetch(`${t.url}/v1/tapes/right`)).json()) as { steps: { request: unknown[] }[] };
    expect(tape.steps[CALLS - 1].request).toHaveLength(2 * CALLS);
    await erase('right');
    expect(await count('SELECT count(*) AS n FROM tapedeck_store.messages')).toBe(0);
  });
});

describe.each(databaseKinds)('moving a store written before the message store, on %s', (kind) => {
  let now: TestTapedeck;
  let before: TestDatabase;
  beforeAll(async () => {
    now = await startTestTapedeck(kind, {}, {});
    await ingestSpans(conversation('left', 'Which platform for Lyon?'), { tenant: '' }, now.running.store.ingest);
    await ingestSpans(conversation('right', 'Which platform for Lyon?'), { tenant: 'acme' }, now.running.store.ingest);
    // The same spans and steps as the version before the message store wrote them: each
    // step's lists as their text in request and response.
    before = await databaseBefore(kind, 'message_store');
    await copyRows(now.db, before.db, 'spans', 'SELECT row_to_json(s)::text AS j FROM tapedeck_store.spans s');
    await copyRows(
      now.db,
      before.db,
      'steps',
      `SELECT (to_jsonb(st) - 'request_messages' - 'response_messages' - 'response_finish_reasons'
               || jsonb_build_object('request', tapedeck_store.step_body(st.tenant, st.request, st.request_messages, NULL),
                                     'response', ${RESPONSE_SQL}))::text AS j
         FROM tapedeck_store.steps st`,
    );
    await migrate(before.db);
  });
  afterAll(async () => {
    await now?.close();
    await before?.drop();
  });

  it('moves every model list into the message store, as ingest stores it now', async () => {
    // a list names its messages by id, which depends on the order they were stored in: by digest here
    const digests = (side: string) =>
      `(SELECT array_agg(encode(m.digest, 'hex') ORDER BY u.n)
          FROM unnest(st.${side}_messages) WITH ORDINALITY AS u(id, n)
          JOIN tapedeck_store.messages m ON m.tenant = st.tenant AND m.id = u.id) AS ${side}_messages`;
    const stored = (db: TestDatabase['db']) =>
      db.query(
        `SELECT st.tenant, encode(st.span_id, 'hex') AS span_id, st.request, st.response,
                ${digests('request')}, ${digests('response')}, st.response_finish_reasons
           FROM tapedeck_store.steps st ORDER BY tenant, span_id`,
      );
    const messages = (db: TestDatabase['db']) =>
      db.query('SELECT tenant, digest, body FROM tapedeck_store.messages ORDER BY tenant, digest');
    expect(await stored(before.db)).toEqual(await stored(now.db));
    expect(await messages(before.db)).toEqual(await messages(now.db));
  });

  it('reads the same tapes and views after the move', async () => {
    const views = (db: TestDatabase['db']) =>
      Promise.all([
        db.query('SELECT * FROM tapedeck.tape_steps ORDER BY trace_id, span_id'),
        db.query('SELECT * FROM tapedeck.step_messages ORDER BY trace_id, span_id, side, position'),
      ]);
    expect(await views(before.db)).toEqual(await views(now.db));
    const payloads = createMemoryPayloadStore();
    for (const [tenant, run] of [
      ['', 'left'],
      ['acme', 'right'],
    ])
      expect(await readTape({ db: before.db, payloads }, tenant, run)).toEqual(
        await readTape({ db: now.db, payloads }, tenant, run),
      );
  });
});
