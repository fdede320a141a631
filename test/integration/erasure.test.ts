/**
 * Erasure over a running tapedeck, on PGlite and PostgreSQL: runs sent over OTLP/HTTP (spans
 * and log records, payloads offloaded to files), then erased through POST /v1/erasures.
 * After a run is erased no route, SQL view, recall answer, dataset line, replay or payload
 * file yields its content; the receipt counts what the store held of it, counted here from
 * the tables before; a replay created before answers 410 replay_erased to the official OpenAI
 * SDK; a payload another run references stays until that run is erased too; redelivering
 * the erased spans stores them again. The other targets (span, trace, user, tenant, payload)
 * each erase what they name and nothing else.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USER_ATTRIBUTES } from '../../src/erasure/erasures.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { createFsPayloadStore } from '../../src/payloads/fs-payload-store.js';
import { databaseKinds } from '../helpers/databases.js';
import { span } from '../helpers/span-builder.js';
import { type GenAiRun, genAiRun, payloadRefsOf, sendGenAiRun } from '../helpers/genai-run.js';
import { randomTraceId, START_TIMEOUT_MS, startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const SECRET = 'zanzibarquokka';
// Over the payload threshold below, and the same in both runs: one payload, two references.
const SHARED_ANSWER = `The forecast for the coast: ${'sunny spells and a light breeze, '.repeat(12)}`;

async function call(t: TestTapedeck, method: string, route: string, body?: unknown) {
  const res = await fetch(`${t.url}${route}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = res.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : undefined;
  return { status: res.status, text, json };
}

async function erase(t: TestTapedeck, target: unknown) {
  const res = await call(t, 'POST', '/v1/erasures', target);
  expect([res.status, res.json?.status]).toEqual([202, expect.stringMatching(/^(purging|complete)$/)]);
  return res.json as { id: string; receipt: Record<string, number>; status: string };
}

/** Waits (polling GET /v1/erasures/{id}) until the background purge is done. */
async function completed(t: TestTapedeck, id: string) {
  for (;;) {
    const view = await call(t, 'GET', `/v1/erasures/${id}`);
    expect(view.status).toBe(200);
    if (view.json.status === 'complete') return view.json;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** What the store holds of a run, counted from the tables (the receipt must say the same). */
async function holdings(t: TestTapedeck, r: GenAiRun) {
  const one = async (sql: string, params: unknown[]) => Number((await t.db.query<{ n: bigint }>(sql, params))[0].n);
  return {
    spans: await one('SELECT count(*) AS n FROM tapedeck_store.spans WHERE run_id = $1', [r.run]),
    steps: await one(
      `SELECT count(*) AS n FROM tapedeck_store.steps st JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id)
        WHERE s.run_id = $1`,
      [r.run],
    ),
    log_records: await one(`SELECT count(*) AS n FROM tapedeck_store.logs WHERE trace_id = decode($1, 'hex')`, [
      r.traceId,
    ]),
    // recall's words are in the step and message rows: no rows of their own to count
    recall_index_rows: 0,
  };
}

function payloadFile(dir: string, ref: string): string {
  const hex = ref.slice('sha256/'.length);
  return path.join(dir, 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex);
}

/** Every place a stored word could still be read from in SQL: the public views. */
async function viewsHolding(t: TestTapedeck, word: string): Promise<number> {
  const [row] = await t.db.query<{ n: bigint }>(
    `SELECT (SELECT count(*) FROM tapedeck.spans WHERE attributes::text LIKE $1)
          + (SELECT count(*) FROM tapedeck.logs WHERE body::text LIKE $1)
          + (SELECT count(*) FROM tapedeck.tape_steps WHERE request::text LIKE $1 OR response::text LIKE $1)
          + (SELECT count(*) FROM tapedeck.step_messages WHERE content::text LIKE $1) AS n`,
    [`%${word}%`],
  );
  return Number(row.n);
}

describe.each(databaseKinds)('erasure on %s', (kind) => {
  let t: TestTapedeck;
  let payloadDir: string;
  const erased = genAiRun({
    run: 'erase-me',
    question: `Is it sunny at ${SECRET} beach, where I live at 12 Harbour Road, today?`,
    answer: SHARED_ANSWER,
    user: 'u-1',
  });
  const kept = genAiRun({
    run: 'keep-me',
    question: 'Is it sunny on the coast today, for my walk?',
    answer: SHARED_ANSWER,
    user: 'u-2',
  });

  beforeAll(async () => {
    payloadDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-erasure-'));
    t = await startTestTapedeck(
      kind,
      { payloadThresholdBytes: 256 },
      { payloads: createFsPayloadStore({ dir: payloadDir }) },
    );
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await t?.close();
    rmSync(payloadDir, { recursive: true, force: true });
  });

  it('leaves no trace of an erased run on any route, view, recall answer, dataset line, replay or payload file', async () => {
    // arrange: both runs stored, readable everywhere, and a replay of the one to erase in use
    await sendGenAiRun(t, erased);
    await sendGenAiRun(t, kept);
    expect((await call(t, 'GET', `/v1/recall?q=${SECRET}`)).json.runs.map((r: { run: string }) => r.run)).toEqual([
      'erase-me',
    ]);
    expect((await call(t, 'GET', '/v1/datasets/chat.jsonl')).text).toContain(SECRET);
    expect(await viewsHolding(t, SECRET)).toBeGreaterThan(0);
    const refs = await payloadRefsOf(t, 'erase-me');
    const keptRefs = await payloadRefsOf(t, 'keep-me');
    const shared = [...refs].filter((r) => keptRefs.has(r));
    const own = [...refs].filter((r) => !keptRefs.has(r));
    expect([shared.length, own.length > 0]).toEqual([1, true]);
    for (const ref of refs) expect(existsSync(payloadFile(payloadDir, ref))).toBe(true);
    const before = await holdings(t, erased);

    const replay = (await call(t, 'POST', '/v1/replays', { run: 'erase-me', mode: 'loose' })).json;
    const sdk = new OpenAI({ baseURL: `${t.url}${replay.base_urls.openai}`, apiKey: 'any', maxRetries: 0 });
    const ask = () => sdk.chat.completions.create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect((await ask()).choices[0].message.content).toBe(SHARED_ANSWER);

    // act
    const erasure = await erase(t, { run: 'erase-me' });

    // assert: the receipt counts what was there
    expect(erasure.receipt).toEqual({ ...before, runs: 1, payloads: own.length });
    expect(await holdings(t, erased)).toEqual({ spans: 0, steps: 0, log_records: 0, recall_index_rows: 0 });
    // the replay in use answers 410 at its next call, naming the erasure
    const refused = await ask().catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(OpenAI.APIError);
    const apiError = refused as InstanceType<typeof OpenAI.APIError>;
    expect([apiError.status, apiError.error]).toEqual([
      410,
      expect.objectContaining({ type: 'replay_erased', erasure: erasure.id }),
    ]);
    expect((await call(t, 'GET', `/v1/replays/${replay.id}`)).status).toBe(410);
    // every read route
    for (const route of [
      '/v1/tapes/erase-me',
      '/v1/tapes/erase-me?resolve=true',
      '/v1/runs/erase-me/reconstruct',
      '/v1/runs/erase-me/tree',
      '/v1/diff?a=erase-me&b=keep-me',
      '/v1/runs/erase-me/cassette',
      '/v1/runs/erase-me/forks',
    ]) {
      const res = await call(t, 'GET', route);
      expect([route, res.status, res.text.includes(SECRET)]).toEqual([route, 404, false]);
    }
    expect((await call(t, 'POST', '/v1/replays', { run: 'erase-me' })).status).toBe(404);
    const runs = await call(t, 'GET', '/v1/runs');
    expect(runs.json.runs.map((r: { run: string }) => r.run)).toEqual(['keep-me']);
    expect((await call(t, 'GET', `/v1/recall?q=${SECRET}`)).json.runs).toEqual([]);
    const dataset = await call(t, 'GET', '/v1/datasets/chat.jsonl');
    expect([dataset.status, dataset.text.includes(SECRET), dataset.text.includes('my walk')]).toEqual([
      200,
      false,
      true,
    ]);
    expect(await viewsHolding(t, SECRET)).toBe(0);
    expect(await t.db.query("SELECT 1 FROM tapedeck.runs WHERE run = 'erase-me'")).toEqual([]);
    // the payloads only it referenced are purged in the background; the shared one stays
    const done = await completed(t, erasure.id);
    expect(done.progress).toEqual({ payloads_total: own.length, payloads_purged: own.length });
    for (const ref of own) expect(existsSync(payloadFile(payloadDir, ref))).toBe(false);
    expect(existsSync(payloadFile(payloadDir, shared[0]))).toBe(true);
    const keptTape = await call(t, 'GET', '/v1/tapes/keep-me?resolve=true');
    expect([keptTape.json.resolved_partial, keptTape.text.includes('sunny spells')]).toEqual([false, true]);

    // the shared payload goes with its last reference
    const second = await erase(t, { run: 'keep-me' });
    expect(second.receipt.payloads).toBe(keptRefs.size);
    await completed(t, second.id);
    expect(existsSync(payloadFile(payloadDir, shared[0]))).toBe(false);
  });

  it('stores an erased span again when it is redelivered, and keeps the withdrawn replay withdrawn', async () => {
    const again = genAiRun({
      run: 'redelivered',
      question: `Will ${SECRET} stay sunny?`,
      answer: SHARED_ANSWER,
      user: 'u-3',
    });
    await sendGenAiRun(t, again);
    const replay = (await call(t, 'POST', '/v1/replays', { run: 'redelivered', mode: 'loose' })).json;
    const erasure = await erase(t, { trace_id: again.traceId });
    expect(erasure.receipt.spans).toBe(2);
    expect((await call(t, 'GET', '/v1/tapes/redelivered')).status).toBe(404);

    // the sender retries the export it still holds
    await sendGenAiRun(t, again);

    const tape = await call(t, 'GET', '/v1/tapes/redelivered');
    expect([tape.status, tape.json.steps.length]).toEqual([200, 2]);
    const withdrawn = await call(t, 'POST', `/v1/replays/${replay.id}/openai/v1/chat/completions`, {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect([withdrawn.status, withdrawn.json.error.erasure]).toEqual([410, erasure.id]);
    await erase(t, { trace_id: again.traceId });
  });

  it('erases one span, every run naming a user, and a named payload, each and nothing more', async () => {
    const a = genAiRun({
      run: 'user-a',
      question: 'First question from the user?',
      answer: SHARED_ANSWER,
      user: 'u-9',
    });
    const b = genAiRun({
      run: 'user-b',
      question: 'Second question from the user?',
      answer: SHARED_ANSWER,
      user: 'u-9',
    });
    const c = genAiRun({
      run: 'other-user',
      question: 'A question from someone else?',
      answer: SHARED_ANSWER,
      user: 'u-8',
    });
    for (const r of [a, b, c]) await sendGenAiRun(t, r);

    const oneSpan = await erase(t, { span: { trace_id: c.traceId, span_id: c.spanIds[1] } });
    expect([oneSpan.receipt.spans, oneSpan.receipt.steps, oneSpan.receipt.runs]).toEqual([1, 1, 0]);
    expect((await call(t, 'GET', '/v1/tapes/other-user')).json.steps.length).toBe(1);

    const byUser = await erase(t, { user: 'u-9' });
    expect([byUser.receipt.spans, byUser.receipt.runs, byUser.receipt.log_records]).toEqual([4, 2, 2]);
    for (const run of ['user-a', 'user-b']) expect((await call(t, 'GET', `/v1/tapes/${run}`)).status).toBe(404);

    // the shared answer of other-user, by name: its step stays, its bytes go at once
    const [ref] = await payloadRefsOf(t, 'other-user');
    const named = await erase(t, { payload: ref });
    expect([named.status, named.receipt.payloads, named.receipt.spans]).toEqual(['complete', 1, 0]);
    expect(existsSync(payloadFile(payloadDir, ref))).toBe(false);
    const tape = await call(t, 'GET', '/v1/tapes/other-user?resolve=true');
    expect([tape.status, tape.json.resolved_partial, tape.text.includes('sunny spells')]).toEqual([200, true, false]);
    expect((await call(t, 'GET', '/v1/recall?q=spells')).json.runs).toEqual([]);
  });

  it('keeps recall finding a step by its other offloaded value when one payload is erased by name', async () => {
    const r = genAiRun({
      run: 'two-payloads',
      question: `Which ferry leaves wombatfjord first? ${'Timetables for the morning crossings, please. '.repeat(8)}`,
      answer: `The quokkaspire ferry leaves first. ${'It sails at dawn with the tide. '.repeat(10)}`,
      user: 'u-7',
    });
    await sendGenAiRun(t, r);
    // the first call's request and response are both offloaded, each to a payload of its own
    const [first] = await t.db.query<{ request: string | null; response: string | null }>(
      `SELECT tapedeck_store.payload_ref_of(st.request) AS request, tapedeck_store.payload_ref_of(st.response) AS response
         FROM tapedeck_store.steps st WHERE st.span_id = decode($1, 'hex')`,
      [r.spanIds[0]],
    );
    expect(first.request).toMatch(/^sha256\//);
    expect(first.response).toMatch(/^sha256\//);
    const runsFor = async (word: string) =>
      (await call(t, 'GET', `/v1/recall?q=${word}`)).json.runs.map((x: { run: string }) => x.run);
    expect(await runsFor('wombatfjord')).toEqual(['two-payloads']);

    await erase(t, { payload: first.response });
    // the answer's words go; the question's, read back from its own payload, stay
    expect(await runsFor('wombatfjord')).toEqual(['two-payloads']);
    const [words] = await t.db.query<{ n: number }>(
      `SELECT cardinality(words) AS n FROM tapedeck_store.steps WHERE span_id = decode($1, 'hex')`,
      [r.spanIds[0]],
    );
    expect(Number(words.n)).toBeGreaterThan(5);
    const tape = await call(t, 'GET', '/v1/tapes/two-payloads?resolve=true');
    const step = tape.json.steps[0];
    expect([JSON.stringify(step.request).includes('wombatfjord'), JSON.stringify(step.response)]).toEqual([
      true,
      JSON.stringify({ $payload: first.response }),
    ]);
  });

  it('finds the end user in every attribute erasure reads, in a span and in its resource, through an index', async () => {
    for (const key of USER_ATTRIBUTES) {
      const [row] = await t.db.query<{ own: string[] | null; resource: string[] | null }>(
        `SELECT tapedeck_store.end_users_of(jsonb_build_object($1::text, 'u-x'), '{}') AS own,
                tapedeck_store.end_users_of('{"service.name": "s"}', jsonb_build_object($1::text, 'u-y')) AS resource`,
        [key],
      );
      expect([key, row.own, row.resource]).toEqual([key, ['u-x'], ['u-y']]);
    }
    const [none] = await t.db.query<{ users: string[] | null }>(
      `SELECT tapedeck_store.end_users_of('{"session.id": "s"}', '{}') AS users`,
    );
    expect(none.users).toBeNull();
    // the spans naming a user are found by the index, not by reading every span
    const plan = await t.db.transaction(async (tx) => {
      await tx.exec('SET LOCAL enable_seqscan = off');
      const rows = await tx.query<Record<string, string>>(
        `EXPLAIN SELECT 1 FROM tapedeck_store.spans u
          WHERE tapedeck_store.end_users_of(u.attributes, u.resource) IS NOT NULL
            AND tapedeck_store.end_users_of(u.attributes, u.resource) @> ARRAY['u-1']`,
      );
      return rows.map((r) => Object.values(r)[0]).join('\n');
    });
    // spans_end_user_idx, or its copy on each time partition
    expect(plan).toMatch(/Index Scan on spans\w*end_users?_\w*idx/);
    expect(plan).not.toContain('Seq Scan');
  });

  it('erases a whole tenant and no other', async () => {
    const spans = [
      span({ id: 'llm', traceId: randomTraceId(), attributes: { 'session.id': 's', 'gen_ai.operation.name': 'chat' } }),
    ];
    await ingestSpans(spans, { tenant: 'acme' }, t.running.store.ingest);
    const before = Number((await t.db.query<{ n: bigint }>('SELECT count(*) AS n FROM tapedeck_store.spans'))[0].n);
    const erasure = await erase(t, { tenant: 'acme' });
    expect([erasure.receipt.spans, erasure.receipt.runs]).toEqual([1, 1]);
    const after = Number((await t.db.query<{ n: bigint }>('SELECT count(*) AS n FROM tapedeck_store.spans'))[0].n);
    expect(after).toBe(before - 1);
  });

  it('refuses a body that names no single target, and answers 404 for what is not stored', async () => {
    for (const body of [{}, { run: 'a', trace_id: 'b' }, { trace_id: 'xyz' }, { payload: 'md5/1' }, { span: {} }, []]) {
      const res = await call(t, 'POST', '/v1/erasures', body);
      expect([JSON.stringify(body), res.status, res.json.error.type]).toEqual([JSON.stringify(body), 400, 'bad_input']);
    }
    expect((await call(t, 'POST', '/v1/erasures', { run: 'never-stored' })).status).toBe(404);
    expect((await call(t, 'GET', '/v1/erasures/er_0')).status).toBe(404);
  });
});
