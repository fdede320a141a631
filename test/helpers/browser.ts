/**
 * Test helper: Debian's Chromium driven by playwright-core, for the console's browser tests.
 * The tests need /usr/bin/chromium: `.ci/run` installs it; outside CI a machine without it
 * skips them with a message saying so, in CI (CI=true) they run and fail without it.
 * Every page opened here records what the browser reports as an error (console errors,
 * uncaught exceptions, dialogs such as alert()) so a test can require there were none.
 */
import { existsSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
const inCi = process.env.CI === 'true';

/** Why the browser tests cannot run here, or null when they can. */
export function browserUnavailable(): string | null {
  if (existsSync(CHROMIUM) || inCi) return null;
  return `browser tests skipped: ${CHROMIUM} is not installed (apt-get install -y chromium; .ci/run installs it)`;
}

export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}

export interface WatchedPage {
  page: Page;
  context: BrowserContext;
  /** console errors, page errors and dialogs seen so far */
  problems: string[];
}

export async function openPage(
  browser: Browser,
  options: { width?: number; height?: number; colorScheme?: 'light' | 'dark' } = {},
): Promise<WatchedPage> {
  const context = await browser.newContext({
    viewport: { width: options.width ?? 1280, height: options.height ?? 800 },
    colorScheme: options.colorScheme ?? 'light',
  });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('dialog', (dialog) => {
    problems.push(`dialog (${dialog.type()}): ${dialog.message()}`);
    void dialog.dismiss();
  });
  return { page, context, problems };
}

const SCREENSHOTS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs', 'console');

/**
 * A screenshot of the page as it is: into docs/console/ when UPDATE_SCREENSHOTS=1 (the
 * committed ones the README shows), else into a scratch directory.
 */
export async function screenshot(page: Page, name: string): Promise<string> {
  const dir = process.env.UPDATE_SCREENSHOTS === '1' ? SCREENSHOTS : path.join(os.tmpdir(), 'tapedeck-console-screens');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file });
  return file;
}
