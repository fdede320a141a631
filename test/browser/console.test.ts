/**
 * NOTE: the web console in a real browser (Debian's Chromium through playwright-core),
 * against a real tapedeck (src/server.ts) holding the test corpus, the multi-agent capture,
 * runs in Chinese and Arabic, and enough runs to page. Every check compares the page with
 * what the HTTP API answers, and every test fails when the browser reported an error.
 * Needs the built console (npm run build writes dist/console; npm test builds first).
 */
import OpenAI from 'openai';
import type { Browser } from 'playwright-core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import type { SpanRecord } from '../../src/spans/span-record.js';
import { browserUnavailable, launchChromium, openPage, screenshot, type WatchedPage } from '../helpers/browser.js';
import { listCaptures, loadCapture } from '../helpers/corpus.js';
import { span } from '../helpers/span-builder.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';
import { loadCoordinatorFixture } from '../fixtures/multi-agent/coordinator-fixture.js';

// Page-side code (page.evaluate) runs in the browser; the test project has no DOM types.
declare const document: any;
declare const getComputedStyle: any;

const skipReason = browserUnavailable();
if (skipReason) console.warn(skipReason);

/** A chat run in the OTel GenAI layout: one model call, a prompt and an answer. */
export function chatRun(run: string, traceHex: string, startMs: number, prompt: string, answer: string): SpanRecord[] {
  const traceId = traceHex.repeat(32).slice(0, 32);
  return [
    span({
      traceId,
      id: `${traceHex}-chat`,
      name: 'chat gpt-4o-mini',
      start: startMs,
      end: startMs + 40,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'session.id': run,
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 5,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: answer }], finish_reason: 'stop' },
        ]),
      },
    }),
  ];
}

/** Whitespace differs between JSON as the API sends it and as the page indents it. */
const squash = (text: string) => text.replace(/\s+/g, '');

/** The texts a step's value must show: message contents, tool calls and their arguments, or the value as JSON. */
function expectedTexts(value: unknown): string[] {
  if (value === null || value === undefined) return [];
  const asJson = (v: unknown) => {
    if (typeof v === 'string') {
      const t = v.trim();
      if (/^[[{]/.test(t)) {
        try {
          return JSON.stringify(JSON.parse(t));
        } catch {
          return v;
        }
      }
      return v;
    }
    return JSON.stringify(v);
  };
  if (Array.isArray(value) && value.every((m) => typeof m === 'object' && m !== null && 'role' in m)) {
    const out: string[] = [];
    for (const m of value as { content?: unknown; tool_calls?: { name: string; arguments?: unknown }[] }[]) {
      if (typeof m.content === 'string') out.push(asJson(m.content));
      else if (Array.isArray(m.content)) {
        for (const part of m.content) out.push(typeof part?.text === 'string' ? part.text : asJson(part));
      } else if (m.content !== undefined && m.content !== null) out.push(asJson(m.content));
      for (const call of m.tool_calls ?? []) {
        out.push(call.name);
        if (call.arguments !== undefined) out.push(asJson(call.arguments));
      }
    }
    return out;
  }
  return [asJson(value)];
}

describe.skipIf(skipReason !== null)('the web console in Chromium', () => {
  let t: TestTapedeck;
  let browser: Browser;
  let watched: WatchedPage | undefined;
  const api = async (path: string) => {
    const res = await fetch(`${t.url}${path}`);
    expect(res.status, path).toBe(200);
    return (await res.json()) as any;
  };
  const open = async (hash: string, options: Parameters<typeof openPage>[1] = {}) => {
    watched = await openPage(browser, options);
    await watched.page.goto(`${t.url}/${hash}`);
    return watched.page;
  };

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestTapedeck('pglite'), launchChromium()]);
    const ingest = t.running.store.ingest;
    for (const ref of listCaptures()) {
      const capture = await loadCapture(ref);
      if (capture.logs.length > 0) await ingestLogs(capture.logs, { tenant: '' }, ingest);
      await ingestSpans(capture.spans, { tenant: '' }, ingest);
    }
    await ingestSpans(loadCoordinatorFixture(), { tenant: '' }, ingest);
    await ingestSpans(
      [
        ...chatRun('run-zh', 'c1', 5_000, '今天北京的天气怎么样？', '北京今天晴朗，气温二十度。'),
        ...chatRun('run-ar', 'c2', 6_000, 'ما هو الطقس في القاهرة اليوم؟', 'الجو مشمس في القاهرة.'),
      ],
      { tenant: '' },
      ingest,
    );
    // older runs, enough for a second page of the list
    const older = Array.from({ length: 55 }, (_, i) =>
      chatRun(`older-${String(i).padStart(2, '0')}`, (0x100 + i).toString(16), i * 10, `question ${i}`, `answer ${i}`),
    );
    await ingestSpans(older.flat(), { tenant: '' }, ingest);
    // a loaded machine starting PGlite, Chromium and the corpus at once can take a while
  }, 180_000);

  afterEach(async () => {
    const problems = watched?.problems ?? [];
    await watched?.context.close();
    watched = undefined;
    expect(problems).toEqual([]);
  });

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it('lists runs newest first as links named by run id, pages to older runs, and filters by outcome', async () => {
    const all: string[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: any = await api(`/v1/runs?limit=50${cursor ? `&cursor=${cursor}` : ''}`);
      all.push(...page.runs.map((r: any) => r.run));
      cursor = page.next_cursor;
    }
    expect(all.length).toBeGreaterThan(50);
    const page = await open('');
    const links = page.locator('table.runs tbody td.run-id > a');
    await expect.poll(() => links.count()).toBe(50);
    expect(await links.allTextContents()).toEqual(all.slice(0, 50));
    await screenshot(page, 'runs');
    await page.getByRole('button', { name: 'Older runs' }).click();
    await expect.poll(() => links.count()).toBe(all.length);
    expect(await links.allTextContents()).toEqual(all);
    await expect.poll(() => page.getByRole('button', { name: 'Older runs' }).isHidden()).toBe(true);

    const failures = (await api('/v1/runs?outcome=failure&limit=1000')).runs.map((r: any) => r.run);
    expect(failures.length).toBeGreaterThan(0);
    await page.getByLabel('Outcome').selectOption('failure');
    await expect.poll(() => links.allTextContents()).toEqual(failures);

    // keyboard: the first run's link takes focus and Enter opens it
    await page.getByLabel('Outcome').focus();
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await expect.poll(() => page.locator('h1').textContent()).toBe(failures[0]);
  });

  it('shows a new run on the list without a reload', async () => {
    const page = await open('');
    const links = page.locator('table.runs tbody td.run-id > a');
    await expect.poll(() => links.count()).toBe(50);
    await ingestSpans(
      chatRun('run-arrived-later', 'd7', 200_000_000, 'ping', 'pong'),
      { tenant: '' },
      t.running.store.ingest,
    );
    await expect.poll(() => links.first().textContent(), { timeout: 15_000 }).toBe('run-arrived-later');
  });

  for (const run of [
    'sess-openinference-openai-multi-tool',
    'sess-openllmetry-anthropic-multi-tool',
    'sess-coordinator',
  ]) {
    it(`shows every step and message of ${run} that the API reports`, async () => {
      const tape = await api(`/v1/tapes/${encodeURIComponent(run)}`);
      expect(tape.steps.length).toBeGreaterThan(1);
      const page = await open(`#/runs/${encodeURIComponent(run)}`);
      await expect.poll(() => page.locator('h1').textContent()).toBe(run);
      const steps = page.locator('ol.steps > li.step');
      expect(await steps.count()).toBe(tape.steps.length);
      for (const step of tape.steps) {
        const item = page.locator(`#step-${step.index}`);
        for (const summary of await item.locator('details:not([open]) > summary').all()) await summary.click();
        const head = await item.locator('.step-head').innerText();
        expect(head).toContain(step.kind);
        expect(head).toContain(step.name);
        expect(head).toContain(step.status === 'error' ? 'error' : step.status);
        const shown = squash(await item.innerText());
        for (const text of [...expectedTexts(step.request), ...expectedTexts(step.response)]) {
          expect(shown, `step ${step.index}`).toContain(squash(text));
        }
      }
      if (run.includes('openai-multi-tool')) await screenshot(page, 'tape');
    });
  }

  it('collapses an offloaded prompt and loads it when asked', async () => {
    const run = 'sess-openllmetry-openai-big-prompt';
    const plain = await api(`/v1/tapes/${run}`);
    const resolved = await api(`/v1/tapes/${run}?resolve=true`);
    const index = plain.steps.findIndex((s: any) => JSON.stringify(s.request).includes('"$payload"'));
    expect(index).toBeGreaterThanOrEqual(0);
    const longest = expectedTexts(resolved.steps[index].request).sort((x, y) => y.length - x.length)[0];
    expect(longest.length).toBeGreaterThan(100_000);
    const page = await open(`#/runs/${run}`);
    const item = page.locator(`#step-${index}`);
    await item.getByRole('button', { name: /Load offloaded/ }).click();
    const details = item.locator('details.long > summary');
    await expect.poll(() => details.count()).toBeGreaterThan(0);
    for (const summary of await details.all()) await summary.click();
    expect(squash(await item.innerText())).toContain(squash(longest));
  });

  it('draws the multi-agent run tree as a graph, children in start order, and opens a child from it', async () => {
    const tree = await api('/v1/runs/sess-coordinator/tree');
    const children = tree.root.children.map((c: any) => c.run);
    expect(children).toEqual(['sess-zulu-paris', 'sess-alpha-lyon']);
    const page = await open('#/runs/sess-units');
    await page.getByRole('link', { name: 'Run tree (from parent)' }).click();
    const node = (run: string) => page.locator(`svg.graph a.node[aria-label="run ${run}"]`);
    await expect.poll(() => node('sess-coordinator').count()).toBe(1);
    expect(await page.locator('svg.graph a.node').count()).toBe(tree.run_count);
    const x = async (run: string) => (await node(run).locator('rect').boundingBox())!.x;
    expect(await x('sess-zulu-paris')).toBeLessThan(await x('sess-alpha-lyon'));
    await screenshot(page, 'tree');
    await node('sess-units').click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('sess-units');
    expect(page.url()).toContain('#/runs/sess-units');
  });

  it('diffs two runs side by side and highlights the first divergence', async () => {
    const a = 'sess-openinference-openai-weather';
    const b = 'sess-openinference-anthropic-weather';
    const diff = await api(`/v1/diff?a=${a}&b=${b}`);
    expect(diff.first_divergence).not.toBeNull();
    const page = await open(`#/runs/${a}`);
    await page.getByLabel('Diff with').fill(b);
    await page.getByRole('button', { name: 'Compare' }).click();
    const rows = page.locator('table.aligned tbody tr');
    await expect.poll(() => rows.count()).toBe(diff.aligned.length);
    const first = diff.aligned.findIndex(
      (e: any) => e.a === diff.first_divergence.a && e.b === diff.first_divergence.b && e.op !== 'same',
    );
    const highlighted = page.locator('tr.first-divergence');
    expect(await highlighted.count()).toBe(1);
    expect(await highlighted.getAttribute('id')).toBe(`aligned-${first}`);
    expect(await highlighted.innerText()).toContain(diff.aligned[first].op);
    expect(await page.locator('.divergence').innerText()).toContain(diff.first_divergence.explanation);
    await screenshot(page, 'diff');
  });

  for (const [language, words, run] of [
    ['Chinese', '北京 天气', 'run-zh'],
    ['Arabic', 'القاهرة', 'run-ar'],
  ] as const) {
    it(`finds runs by words in ${language}`, async () => {
      const found = (await api(`/v1/recall?q=${encodeURIComponent(words)}`)).runs.map((r: any) => r.run);
      expect(found).toContain(run);
      const page = await open('#/recall');
      await page.getByLabel('Words').fill(words);
      await page.getByRole('button', { name: 'Search' }).click();
      const results = page.locator('ol.found > li .found-head > a');
      await expect.poll(() => results.allTextContents()).toEqual(found);
      expect(await page.locator('ol.found > li').first().locator('ol.skeleton').innerText()).toContain(
        'llm:gpt-4o-mini',
      );
      if (language === 'Chinese') await screenshot(page, 'recall');
    });
  }

  it("shows a replay's status while the official OpenAI SDK drives it, divergence explained", async () => {
    const run = 'sess-openinference-openai-weather';
    const tape = await api(`/v1/tapes/${run}`);
    const firstCall = tape.steps.find((s: any) => s.kind === 'llm');
    const page = await open(`#/runs/${run}`);
    await page.getByRole('button', { name: 'Replay (strict)' }).click();
    await expect.poll(() => page.url()).toMatch(/#\/replays\/rp_[0-9a-f]{32}$/);
    const id = page.url().split('/').pop()!;
    await expect.poll(() => page.locator('dd.served').textContent()).toBe('0 of 2 model steps');

    const client = new OpenAI({ baseURL: `${t.url}/v1/replays/${id}/openai/v1`, apiKey: 'replay', maxRetries: 0 });
    const tools = firstCall.params.tools.map((tool: any) => ({ type: 'function', function: tool }));
    const messages = firstCall.request.map((m: any) => ({ role: m.role, content: m.content }));
    await client.chat.completions.create({ model: 'gpt-4o-mini', messages, tools });
    await expect.poll(() => page.locator('dd.served').textContent()).toBe('1 of 2 model steps');
    expect(await page.locator('dd.remaining').textContent()).toBe('1');

    const wrong = [...messages, { role: 'user', content: 'And in Lyon?' }];
    await expect(client.chat.completions.create({ model: 'gpt-4o-mini', messages: wrong, tools })).rejects.toThrow(
      /409/,
    );
    const divergence = page.locator('.divergence');
    await expect.poll(() => divergence.count()).toBe(1);
    const said = await divergence.innerText();
    const status = await api(`/v1/replays/${id}`);
    expect(said).toContain(`Diverged at model step ${status.diverged.step}`);
    expect(said).toContain(status.diverged.difference.field);
    await screenshot(page, 'replay');
  });

  it('reads well on a narrow window and in the dark theme', async () => {
    const page = await open('#/runs/sess-openinference-openai-multi-tool', {
      width: 390,
      height: 800,
      colorScheme: 'dark',
    });
    await expect.poll(() => page.locator('ol.steps > li.step').count()).toBeGreaterThan(1);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - document.documentElement.clientWidth,
    );
    expect(overflow).toBeLessThanOrEqual(0);
    const background = await page.evaluate(() => {
      const g = globalThis as any;
      return g.getComputedStyle(g.document.body).backgroundColor;
    });
    expect(background).toBe('rgb(18, 21, 27)');
    await screenshot(page, 'tape-narrow-dark');
  });
});
