/**
 * The chat-format JSONL export.
 * - Every line passes a fine-tuning format check written for the tests (chat-validator.ts),
 *   independently of the exporter's own: valid JSON, `{"messages": [...]}` only, roles in order
 *   (system first, then user; an assistant's tool calls answered by tool messages that
 *   reference their ids, each once; ending on an assistant answer).
 * - The counts add up (exported + skipped = considered) and each run is skipped for the
 *   reason its shape calls for (synthetic-runs.ts), across pages of the keyset pagination;
 *   time and outcome filters; the HTTP stream and `?summary=true` agree with each other.
 * - The real corpus captures export as the conversations their agents had.
 * Memory at 100k runs is measured by bench/dataset.mjs.
 */
import type { AddressInfo } from 'node:net';
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
} from '../../src/runs/dataset.js';
import { listCaptures } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { ingestRecords, loadCaptureRecords, openTestStore, type TestStore } from '../unit/runs/store-fixtures.js';
import { expectedFate, insertSyntheticRuns, SHAPES, startOf } from '../unit/runs/synthetic-runs.js';
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
});
