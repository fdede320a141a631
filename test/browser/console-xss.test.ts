/**
 * NOTE: stored content is untrusted. Runs whose id, messages, tool names and tool arguments
 * hold script tags, event-handler attributes and `javascript:` links are shown on every
 * console page in Chromium; the markup must appear as text and nothing in it may run.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { browserUnavailable, launchChromium, openPage } from '../helpers/browser.js';
import { span } from '../helpers/span-builder.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

// Page-side code (page.evaluate) runs in the browser; the test project has no DOM types.
declare const document: any;
declare const window: any;

const skipReason = browserUnavailable();
if (skipReason) console.warn(skipReason);

const hostileRun = `<img src=x onerror="window.__xss='run id'">javascript:window.__xss='run'`;
const scriptText = `<script>window.__xss='message'</script>`;
const imageText = `<img src=x onerror="window.__xss='image'">`;
const linkText = `<a href="javascript:window.__xss='link'">open</a>`;
const hostileArgs = { url: "javascript:window.__xss='argument'", html: linkText, note: scriptText };
const hostileTool = `<svg onload="window.__xss='tool'">`;

function hostileSpans(run: string, trace: string): ReturnType<typeof span>[] {
  const traceId = trace.repeat(32).slice(0, 32);
  const common = { traceId, attributes: {} };
  return [
    span({
      ...common,
      id: `${trace}agent`,
      name: 'invoke_agent xss-agent',
      start: 0,
      end: 100,
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'xss-agent',
        'session.id': run,
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: `zebraword ${scriptText}` }] },
        ]),
      },
    }),
    span({
      ...common,
      id: `${trace}chat`,
      parent: `${trace}agent`,
      name: 'chat gpt-4o-mini',
      start: 5,
      end: 40,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'system', parts: [{ type: 'text', content: imageText }] },
          { role: 'user', parts: [{ type: 'text', content: `zebraword ${scriptText} ${linkText}` }] },
        ]),
        'gen_ai.output.messages': JSON.stringify([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'call_<b>1</b>', name: hostileTool, arguments: hostileArgs }],
            finish_reason: 'tool_call',
          },
        ]),
      },
    }),
    span({
      ...common,
      id: `${trace}tool`,
      parent: `${trace}agent`,
      name: `execute_tool ${hostileTool}`,
      start: 45,
      end: 60,
      status: 'error',
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': hostileTool,
        'gen_ai.tool.call.id': 'call_<b>1</b>',
        'gen_ai.tool.call.arguments': JSON.stringify(hostileArgs),
        'gen_ai.tool.call.result': JSON.stringify({ html: `${imageText}${scriptText}` }),
      },
    }),
  ];
}

describe.skipIf(skipReason !== null)('hostile content in the console', () => {
  let t: TestTapedeck;
  let browser: Browser;

  beforeAll(async () => {
    [t, browser] = await Promise.all([startTestTapedeck('pglite'), launchChromium()]);
    await ingestSpans(
      [...hostileSpans(hostileRun, 'e1'), ...hostileSpans('javascript:alert(1)', 'e2')],
      { tenant: '' },
      t.running.store.ingest,
    );
    // a loaded machine starting PGlite, Chromium and the corpus at once can take a while
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  const pages = [
    ['the runs list', '#/'],
    ['the tape', `#/runs/${encodeURIComponent(hostileRun)}`],
    ['the tree', `#/runs/${encodeURIComponent(hostileRun)}/tree`],
    ['the diff', `#/diff?${new URLSearchParams({ a: hostileRun, b: 'javascript:alert(1)' })}`],
    ['recall', `#/recall?q=zebraword`],
  ] as const;

  for (const [name, hash] of pages) {
    it(`shows the markup as text on ${name} and runs none of it`, async () => {
      const { page, context, problems } = await openPage(browser);
      try {
        await page.goto(`${t.url}/${hash}`);
        await expect.poll(() => page.locator('main').innerText()).toContain(hostileRun);
        for (const summary of await page.locator('details:not([open]) > summary').all()) await summary.click();
        const text = await page.locator('main').innerText();
        if (name === 'the tape') {
          for (const literal of [scriptText, imageText, hostileTool, "javascript:window.__xss='argument'"]) {
            expect(text).toContain(literal);
          }
          expect(text).toContain(linkText);
        }
        const hrefs = await page
          .locator('a[href]')
          .evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
        expect(hrefs.filter((href) => !href.startsWith('#') && !href.startsWith('/'))).toEqual([]);
        const dom = await page.evaluate(() => ({
          xss: (window as unknown as { __xss?: unknown }).__xss ?? null,
          scripts: document.querySelectorAll('script').length,
          images: document.querySelectorAll('main img, main svg image').length,
          handlers: [...document.querySelectorAll('main *')].filter((el) =>
            [...el.attributes].some((a) => a.name.startsWith('on')),
          ).length,
        }));
        expect(dom).toEqual({ xss: null, scripts: 1, images: 0, handlers: 0 });
        // every run link the page drew, followed: none may run script
        for (const link of await page.locator('main a[href^="#/runs/"]').all()) {
          await link.click();
          await page.goBack();
        }
        expect(await page.evaluate(() => (window as unknown as { __xss?: unknown }).__xss ?? null)).toBeNull();
        expect(problems).toEqual([]);
      } finally {
        await context.close();
      }
    });
  }
});
