/**
 * The chat-format JSONL export.
 * - Every line passes a fine-tuning format check written for the tests (chat-validator.ts),
 *   independently of the exporter's own: valid JSON, `{"messages": [...]}` only, roles in order
 *   (system first, then user; an assistant's tool calls answered by tool messages that
 *   reference their ids, each once; ending on an assistant answer).
 * - The counts add up (exported + skipped = considered) and each run is skipped for the
 *   reason its shape calls for (bench/lib/synthetic-runs.mjs), across pages of the keyset pagination;
 *   time and outcome filters; the HTTP stream and `?summary=true` agree with each other.
 * - The real corpus captures export as the conversations their agents had: with the default
 *   filter every successful run is exported with its whole content (prompt, every tool result,
 *   final answer), and every run skipped is listed with a reason the docs call legitimate.
 * Memory at 100k runs is measured by bench/dataset.mjs.
 */
import type { AddressInfo } from 'node:net';
import { isDeepStrictEqual } from 'node:util';
import { serve } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createApp } from '../../src/api/app.js';
import { createRunRoutes } from '../../src/api/run-routes.js';
import { silentLogger } from '../../src/logger.js';
import {
  chatDatasetLines,
  emptySummary,
  summarizeChatDataset,
  type DatasetFilter,
  type DatasetSummary,
  type SkipReason,
} from '../../src/runs/dataset.js';
import type { Tape } from '../../src/normalize/step.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { FAILED_CALL_LEAVES_NO_SPAN, NO_SESSION_KEY } from '../helpers/corpus-expectations.js';
import { databaseKinds } from '../helpers/databases.js';
import { ingestRecords, loadCaptureRecords, openTestStore, type TestStore } from '../unit/runs/store-fixtures.js';
import { expectedFate, insertSyntheticRuns, SHAPES, startOf } from '../../bench/lib/synthetic-runs.mjs';
import { validChatLine } from '../unit/runs/chat-validator.js';

async function exportAll(
  t: TestStore,
  tenant: string,
  filter: DatasetFilter,
  pageSize?: number,
): Promise<{ lines: string[]; summary: DatasetSummary }> {
  const summary = emptySummary();
  const lines: string[] = [];
  for await (const line of chatDatasetLines(t.store, tenant, filter, summary, { pageSize })) lines.push(line);
  return { lines, summary };
}

type Any = any; // JSON lines read back

const total = (s: DatasetSummary) => s.exported + Object.values(s.skipped).reduce((a, b) => a + b, 0);
const ALL: DatasetFilter = { since: null, until: null, outcome: 'success' };

describe.each(databaseKinds)('dataset export on %s', (kind) => {
  let t: TestStore;
  const N = 1200;
  beforeAll(async () => {
    t = await openTestStore(kind);
    await insertSyntheticRuns(t.store.db, '', 0, N - 1, BigInt(Date.now()) * 1_000_000n);
    for (const ref of listCaptures()) await ingestRecords(t.store, await loadCaptureRecords(ref), 'corpus');
  }, 180_000);
  afterAll(async () => t?.drop());

  it('skips each run for the reason its shape calls for, and the counts add up across pages', async () => {
    const { lines, summary } = await exportAll(t, '', ALL, 97);
    const expected = emptySummary();
    for (let i = 0; i < N; i++) {
      const fate = expectedFate(SHAPES[i % 12]);
      if (fate === 'exported') expected.exported++;
      else expected.skipped[fate]++;
      expected.considered++;
    }
    expect(summary).toEqual(expected);
    expect(total(summary)).toBe(summary.considered);
    expect(lines.length).toBe(summary.exported);
    for (const line of lines) expect(validChatLine(line), line).toBeNull();
    expect(new Set(lines).size).toBe(lines.length);
  });

  it('writes the OpenAI chat shape, with deterministic ids for id-less tool calls', async () => {
    const { lines } = await exportAll(t, '', { since: startOf(0), until: startOf(12), outcome: 'success' });
    const byUser = new Map(
      lines.map((l) => {
        const m = JSON.parse(l).messages;
        return [m[1].content, m];
      }),
    );
    expect(byUser.get('Weather in Paris? #0')).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris? #0' },
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_0', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_0', content: '{"city":"Paris","temperature_c":0}' },
      { role: 'assistant', content: 'Paris is 0°C.' },
    ]);
    const delta = byUser.get('Weather in Paris? #11');
    expect(delta[2].tool_calls[0].id).toBe('call_1');
    expect(delta[3]).toEqual({ role: 'tool', tool_call_id: 'call_1', content: '{"city":"Paris","temperature_c":11}' });
  });

  it('filters by start time (until exclusive) and outcome', async () => {
    const window = await summarizeChatDataset(t.store, '', { since: startOf(24), until: startOf(48), outcome: 'any' });
    expect(window.considered).toBe(24 - 2); // the two recent runs (#32, #44) started now, outside the window
    const failures = await summarizeChatDataset(t.store, '', { since: null, until: null, outcome: 'failure' });
    // The failed runs (root span in error) still answered: with --outcome failure they are exported.
    expect([failures.exported, failures.skipped.no_terminal, failures.skipped.outcome]).toEqual([
      N / 12,
      N / 12,
      N - 2 * (N / 12),
    ]);
  });

  it('answers GET /v1/datasets/chat.jsonl as a stream, and ?summary=true with the same counts', async () => {
    const app = createApp({
      logger: silentLogger(),
      routes: [createRunRoutes(t.store, loadConfig({}))],
      ready: async () => ({ ok: true }),
    });
    const res = await app.request('/v1/datasets/chat.jsonl');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const body = await res.text();
    const summary = (await (await app.request('/v1/datasets/chat.jsonl?summary=true')).json()) as DatasetSummary;
    expect(summary.considered).toBe(N);
    expect(body.split('\n').filter(Boolean).length).toBe(summary.exported);
    expect(total(summary)).toBe(summary.considered);
    const bad = await app.request('/v1/datasets/chat.jsonl?outcome=done');
    expect([bad.status, ((await bad.json()) as any).error.type]).toEqual([400, 'bad_input']);
    const badMerge = await app.request('/v1/datasets/chat.jsonl?merge_user_turns=maybe');
    const error = ((await badMerge.json()) as any).error;
    expect([badMerge.status, error.type]).toEqual([400, 'bad_input']);
    expect(error.message).toContain('merge_user_turns');
    const merged = await app.request('/v1/datasets/chat.jsonl?summary=true&merge_user_turns=true');
    expect(await merged.json()).toEqual(summary); // no run of this store has consecutive user turns
  });

  it('streams every line over a real socket', async () => {
    const app = createApp({
      logger: silentLogger(),
      routes: [createRunRoutes(t.store, loadConfig({}))],
      ready: async () => ({ ok: true }),
    });
    const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 });
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/datasets/chat.jsonl?outcome=any`;
      const body = await (await fetch(base)).text();
      const summary = (await (await fetch(`${base}&summary=true`)).json()) as DatasetSummary;
      const lines = body.split('\n').filter(Boolean);
      expect(lines.length).toBe(summary.exported);
      expect(summary.exported).toBeGreaterThan(500);
      for (const line of lines) expect(validChatLine(line)).toBeNull();
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('exports the corpus captures as the conversations their agents had', async () => {
    const { lines, summary } = await exportAll(t, 'corpus', { since: null, until: null, outcome: 'any' });
    expect(total(summary)).toBe(summary.considered);
    for (const line of lines) expect(validChatLine(line), line).toBeNull();
    const weather = lines
      .map((l) => JSON.parse(l).messages)
      .find((m) => m.some((x: any) => x.content === "What's the weather in Paris right now?") && m.length === 5);
    expect(weather?.map((m: any) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
    expect(summary).toMatchObject({ skipped: { no_input: 1 } }); // content capture off
  });

  it('exports every successful corpus run with its whole content by default, and says why any other was skipped', async () => {
    const fates = new Map<string, SkipReason | null>();
    const lines: string[] = [];
    for await (const line of chatDatasetLines(t.store, 'corpus', ALL, emptySummary(), {
      onRun: (_, r) => fates.set(r.run, r.skipped),
    }))
      lines.push(line);
    const exportedRuns = [...fates].filter(([, f]) => f === null).map(([run]) => run);
    const lineOf = new Map(exportedRuns.map((run, i) => [run, JSON.parse(lines[i]).messages as Any[]]));
    const skipped: string[] = [];
    let checked = 0;
    for (const ref of listCaptures()) {
      const c = await loadCapture(ref);
      const gt = c.groundTruth;
      const traces = [...new Set(c.spans.map((x) => x.traceId))];
      const runs = NO_SESSION_KEY.has(c.layout) ? traces.map((id) => `trace:${id}`) : [gt.session_id];
      const failed = gt.steps.some((x) => x.error !== undefined && x.error !== null);
      for (const run of runs) {
        expect(fates.has(run), `${run} considered`).toBe(true);
        const fate = fates.get(run) ?? null;
        if (fate !== null) {
          skipped.push(`${c.layout}/${c.scenario} ${run}: ${fate}${c.shortened ? ' (fixture shortened)' : ''}`);
          // the documented reasons these captures give (docs/api.md, docs/support.md)
          if (c.shortened) continue; // the fixture's prompt was shortened for display: not whole here
          if (fate === 'outcome') expect(failed, run).toBe(true);
          else if (fate === 'no_input') expect(gt.content_capture, run).toBe(false);
          else if (fate === 'no_output' && failed) {
            // the failed call left no span, so nothing on record says the run failed (docs/support.md)
            expect(FAILED_CALL_LEAVES_NO_SPAN.has(c.layout), run).toBe(true);
          } else if (fate === 'no_output') {
            // bare OpenLLMetry: each model call its own run; one that asked for tools has no answer
            expect(NO_SESSION_KEY.has(c.layout), run).toBe(true);
            const tape = (await readTape(t.store, 'corpus', run)) as Tape;
            expect(tape.steps.at(-1)?.response, run).toMatchObject([{ finish_reason: 'tool_calls' }]);
          } else expect.fail(`${run} skipped as ${fate}`);
          continue;
        }
        if (NO_SESSION_KEY.has(c.layout) && run !== runs.at(-1)) continue; // checked in its last call's run
        const messages = lineOf.get(run) as Any[];
        expect(validChatLine(`${JSON.stringify({ messages })}\n`)).toBeNull();
        if (c.shortened) continue; // content shortened for display: not comparable
        const text = (m: Any) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
        const firstCall = gt.steps.find((x) => x.type === 'model_call') as Any;
        const prompt = (firstCall.request.messages as Any[]).filter((m) => m.role === 'user').map(text);
        expect(
          messages
            .filter((m) => m.role === 'user')
            .map(text)
            .slice(0, prompt.length),
          run,
        ).toEqual(prompt);
        for (const call of gt.steps.filter((x) => x.type === 'tool_call')) {
          const sent = typeof call.result_as_sent === 'string' ? call.result_as_sent : JSON.stringify(call.result);
          expect(
            messages.some((m) => m.role === 'tool' && isDeepStrictEqual(JSON.parse(m.content), JSON.parse(sent))),
            `${run}: tool result ${sent}`,
          ).toBe(true);
        }
        expect(messages.at(-1).content, run).toBe(gt.final_answer);
        checked++;
      }
    }
    console.log(`corpus runs skipped by the default export:\n${skipped.join('\n')}`);
    expect(checked).toBeGreaterThan(15);
  });
});
