/**
 * The read side over a running tapedeck: offloaded payloads and resolve=true within
 * --tape-max-bytes, runs paging, the README's SQL queries, run trees from trace parentage,
 * and reindex. Scope: the store and routes; layout rules live in test/unit/normalize.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { reindex } from '../../src/tapes/reindex.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { span } from '../helpers/span-builder.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const README = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'README.md');
const bigPrompt = listCaptures().find((c) => c.layout === 'openllmetry-openai' && c.scenario === 'big-prompt')!;

async function getJson(url: string): Promise<{ status: number; body: any }> {
  const res = await fetch(url);
  return { status: res.status, body: await res.json() };
}

function chat(
  id: string,
  parent: string | null,
  start: number,
  session: string | null,
  prompt: string,
  extra: Record<string, string> = {},
) {
  return span({
    id,
    parent,
    start,
    end: start + 5,
    name: 'chat gpt-4o',
    attributes: {
      ...(session ? { 'session.id': session } : {}),
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: `re: ${prompt}` }], finish_reason: 'stop' },
      ]),
      ...extra,
    },
  });
}

describe.each(databaseKinds)('read API on %s', (kind) => {
  let t: TestTapedeck;
  beforeAll(async () => {
    t = await startTestTapedeck(kind, { payloadThresholdBytes: 64 * 1024, tapeMaxBytes: 100 * 1024 });
    const capture = await loadCapture(bigPrompt);
    await ingestSpans(capture.spans, { tenant: '' }, t.running.store.ingest);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('offloads a 300 KiB prompt, shows the reference, and resolves it back to the original text', async () => {
    const capture = await loadCapture(bigPrompt);
    const run = capture.groundTruth.session_id;
    const stored = await getJson(`${t.url}/v1/tapes/${run}`);
    const llm = stored.body.steps.find((s: any) => s.kind === 'llm' && JSON.stringify(s.request).includes('$payload'));
    expect(llm.request[0].role).toBe('system');
    expect(llm.request[1]).toEqual({ $payload: expect.stringMatching(/^sha256\/[0-9a-f]{64}$/) });
    // Over the 100 KiB --tape-max-bytes: the prefix that fits is resolved, the rest stays.
    const partial = await getJson(`${t.url}/v1/tapes/${run}?resolve=true`);
    expect(partial.body.resolved_partial).toBe(true);
    expect(JSON.stringify(partial.body)).toContain('$payload');
  });

  it('resolves within a larger budget to the prompt the agent sent', async () => {
    const big = await startTestTapedeck(kind, { payloadThresholdBytes: 64 * 1024 });
    try {
      const capture = await loadCapture(bigPrompt);
      await ingestSpans(capture.spans, { tenant: '' }, big.running.store.ingest);
      const resolved = await getJson(`${big.url}/v1/tapes/${capture.groundTruth.session_id}?resolve=true`);
      expect(resolved.body.resolved_partial).toBe(false);
      const sent = capture.groundTruth.steps.find((s) => s.type === 'model_call')!.request as {
        messages: { role: string; content: string }[];
      };
      const userText = sent.messages.find((m) => m.role === 'user')!.content;
      expect(userText.length).toBeGreaterThan(300 * 1024);
      const llm = resolved.body.steps.find((s: any) => s.kind === 'llm');
      expect(llm.request.find((m: any) => m.role === 'user').content).toBe(userText);
    } finally {
      await big.close();
    }
  });

  it('refuses resolve values other than true or false', async () => {
    const { status, body } = await getJson(`${t.url}/v1/tapes/x?resolve=yes`);
    expect(status).toBe(400);
    expect(body.error.type).toBe('bad_input');
  });

  it('builds a run tree from trace parentage whatever order the spans arrive in', async () => {
    // coordinator (session coord) → sub-agent span carrying session sub, child first.
    const spans = [
      chat('sub-llm', 'sub-agent', 20, null, 'sub question'),
      span({
        id: 'sub-agent',
        parent: 'coord',
        start: 15,
        end: 40,
        name: 'invoke_agent researcher',
        attributes: { 'session.id': 'sub', 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'researcher' },
      }),
      chat('coord-llm', 'coord', 10, null, 'plan'),
      span({
        id: 'coord',
        parent: null,
        start: 0,
        end: 50,
        name: 'invoke_agent coordinator',
        attributes: {
          'session.id': 'coord',
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'coordinator',
        },
      }),
    ].map((s) => ({ ...s, traceId: 'aa'.repeat(16) }));
    for (const s of spans) await ingestSpans([s], { tenant: '' }, t.running.store.ingest);
    const runs = (await getJson(`${t.url}/v1/runs?limit=100`)).body.runs;
    const sub = runs.find((r: any) => r.run === 'sub');
    const coord = runs.find((r: any) => r.run === 'coord');
    expect(coord.parent_run).toBeNull();
    expect(sub.parent_run).toBe('coord');
    const subTape = (await getJson(`${t.url}/v1/tapes/sub`)).body;
    expect(subTape.steps.map((s: any) => s.kind)).toEqual(['agent', 'llm']);
  });

  it('pages runs newest first with a cursor and refuses a cursor it did not issue', async () => {
    const all = (await getJson(`${t.url}/v1/runs?limit=100`)).body.runs.map((r: any) => r.run);
    expect(all.length).toBeGreaterThanOrEqual(3);
    const first = await getJson(`${t.url}/v1/runs?limit=1`);
    expect(first.body.runs.map((r: any) => r.run)).toEqual([all[0]]);
    const second = await getJson(`${t.url}/v1/runs?limit=1&cursor=${first.body.next_cursor}`);
    expect(second.body.runs.map((r: any) => r.run)).toEqual([all[1]]);
    const bad = await getJson(`${t.url}/v1/runs?cursor=nonsense`);
    expect(bad.status).toBe(400);
    expect(bad.body.error.message).toContain('not one this server issued');
    expect((await getJson(`${t.url}/v1/runs?limit=0`)).status).toBe(400);
  });

  it('filters runs by outcome and names a bad outcome', async () => {
    const all = (await getJson(`${t.url}/v1/runs?limit=100`)).body.runs;
    for (const outcome of ['success', 'failure', 'unknown']) {
      const got = (await getJson(`${t.url}/v1/runs?limit=100&outcome=${outcome}`)).body.runs;
      expect(got.map((r: any) => r.run)).toEqual(all.filter((r: any) => r.outcome === outcome).map((r: any) => r.run));
    }
    const bad = await getJson(`${t.url}/v1/runs?outcome=done`);
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual({
      type: 'bad_input',
      message: 'outcome must be one of success, failure, unknown, got "done"',
    });
  });

  it('runs the README queries exactly as written', async () => {
    const queries = [...readFileSync(README, 'utf8').matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]);
    expect(queries.length).toBeGreaterThanOrEqual(3);
    const results = [];
    for (const sql of queries) results.push(await t.db.query(sql));
    expect(results[0].length).toBeGreaterThan(0);
    expect(results[0][0]).toHaveProperty('outcome');
    expect(results[2].some((r: any) => r.content === 'plan')).toBe(true);
  });

  it('reindex re-derives the same steps from stored spans, idempotently', async () => {
    const before = await t.db.query('SELECT * FROM tapedeck.tape_steps ORDER BY trace_id, span_id');
    await t.db.query('DELETE FROM tapedeck_store.steps');
    await t.db.query('UPDATE tapedeck_store.spans SET run_id = NULL, parent_run = NULL');
    const seen: number[] = [];
    const totals = await reindex(t.db, t.running.store.derive, {
      batchTraces: 1,
      onProgress: (p) => seen.push(p.tracesDone),
    });
    expect(totals.tracesDone).toBe(totals.tracesTotal);
    expect(seen[seen.length - 1]).toBe(totals.tracesTotal);
    await reindex(t.db, t.running.store.derive);
    const after = await t.db.query('SELECT * FROM tapedeck.tape_steps ORDER BY trace_id, span_id');
    expect(after).toEqual(before);
  });
});

describe('run cost from --pricing', () => {
  it('prices runs from the table, and says null (never 0.0) when a model call cannot be priced', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-pricing-'));
    const pricingFile = path.join(dir, 'prices.json');
    writeFileSync(pricingFile, JSON.stringify({ models: { 'gpt-4o-mini-2024-07-18': { input: 0.15, output: 0.6 } } }));
    const priced = await startTestTapedeck('pglite', { pricingFile });
    const unpriced = await startTestTapedeck('pglite');
    try {
      const weather = listCaptures().find((c) => c.layout === 'openinference-openai' && c.scenario === 'weather')!;
      const capture = await loadCapture(weather);
      for (const t of [priced, unpriced]) await ingestSpans(capture.spans, { tenant: '' }, t.running.store.ingest);
      const tape = (await getJson(`${priced.url}/v1/tapes/${capture.groundTruth.session_id}`)).body;
      const expected = tape.steps
        .filter((s: any) => s.kind === 'llm')
        .reduce((sum: number, s: any) => sum + (s.tokens.input * 0.15 + s.tokens.output * 0.6) / 1e6, 0);
      const [pricedRun] = (await getJson(`${priced.url}/v1/runs`)).body.runs;
      expect(pricedRun.cost_usd).toBeCloseTo(expected, 12);
      expect(pricedRun.cost_usd).toBeGreaterThan(0);
      const [unpricedRun] = (await getJson(`${unpriced.url}/v1/runs`)).body.runs;
      expect(unpricedRun.cost_usd).toBeNull();
    } finally {
      await priced.close();
      await unpriced.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('a run over 20,000 spans', () => {
  it('is read to that bound and says truncated', async () => {
    const t = await startTestTapedeck('pglite');
    try {
      // Rows straight into the table: the bound is about reading, not about ingest.
      await t.db.query(
        `INSERT INTO tapedeck_store.spans (trace_id, span_id, name, kind, start_ns, end_ns, status_code,
                                           attributes, events, links, resource, run_id)
         SELECT decode(repeat('ab', 16), 'hex'), decode(lpad(to_hex(i), 16, '0'), 'hex'), 'work', 'internal',
                1796000000000000000 + i, 1796000000000000000 + i + 1, 'unset', '{}', '[]', '[]', '{}', 'long-run'
           FROM generate_series(1, 20005) AS i`,
      );
      const { status, body } = await getJson(`${t.url}/v1/tapes/long-run`);
      expect(status).toBe(200);
      expect(body.truncated).toBe(true);
      expect(body.spans_examined).toBe(20_000);
    } finally {
      await t.close();
    }
  });
});
