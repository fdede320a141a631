/**
 * The console's entry: a hash router (#/…) over six pages, the header's token form, and
 * error display. Each page gets an AbortSignal that fires when the reader leaves it, which
 * stops its requests and timers.
 */
import { ApiFailure, onUnauthorized, storedToken, storeToken } from './api.js';
import { h, replaceChildren } from './dom.js';
import { showDiff } from './pages/diff.js';
import { showRecall } from './pages/recall.js';
import { showReplay, showReplays } from './pages/replay.js';
import { showRuns } from './pages/runs.js';
import { showTape } from './pages/tape.js';
import { showTree } from './pages/tree.js';

export interface PageContext {
  main: HTMLElement;
  segments: string[];
  params: URLSearchParams;
  signal: AbortSignal;
}

type Page = (ctx: PageContext) => Promise<void> | void;

function route(segments: string[]): { page: Page; section: string } {
  const [first, second, third] = segments;
  if (first === 'runs' && second !== undefined && third === 'tree') return { page: showTree, section: 'runs' };
  if (first === 'runs' && second !== undefined) return { page: showTape, section: 'runs' };
  if (first === 'diff') return { page: showDiff, section: 'diff' };
  if (first === 'recall') return { page: showRecall, section: 'recall' };
  if (first === 'replays' && second) return { page: showReplay, section: 'replays' };
  if (first === 'replays') return { page: showReplays, section: 'replays' };
  return { page: showRuns, section: 'runs' };
}

let current: AbortController | undefined;
let firstRender = true;

async function render(): Promise<void> {
  current?.abort();
  const controller = new AbortController();
  current = controller;
  const raw = location.hash.replace(/^#\/?/, '');
  const [pathPart, queryPart = ''] = raw.split('?', 2);
  const segments = pathPart
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        return s;
      }
    });
  const { page, section } = route(segments);
  for (const link of document.querySelectorAll<HTMLAnchorElement>('nav a[data-section]')) {
    if (link.dataset.section === section) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  const main = document.getElementById('main')!;
  replaceChildren(main, h('p', { class: 'loading' }, 'Loading…'));
  if (!firstRender) main.focus({ preventScroll: false });
  firstRender = false;
  try {
    await page({ main, segments, params: new URLSearchParams(queryPart), signal: controller.signal });
  } catch (error) {
    if (controller.signal.aborted) return;
    replaceChildren(main, failure(error));
  }
}

/** What went wrong, in the API's words. */
export function failure(error: unknown): HTMLElement {
  if (error instanceof ApiFailure) {
    const hint = error.status === 401 ? ' Enter an API token above.' : '';
    return h(
      'div',
      { class: 'failure', role: 'alert' },
      h('strong', null, `${error.type} (HTTP ${error.status})`),
      ': ',
      error.message,
      hint,
    );
  }
  return h(
    'div',
    { class: 'failure', role: 'alert' },
    h('strong', null, 'error'),
    ': ',
    String((error as Error)?.message ?? error),
  );
}

function setUpTokenForm(): void {
  const form = document.getElementById('token-form') as HTMLFormElement;
  const input = document.getElementById('token-input') as HTMLInputElement;
  if (storedToken()) form.hidden = false;
  onUnauthorized(() => {
    form.hidden = false;
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    storeToken(input.value.trim());
    input.value = '';
    void render();
  });
}

setUpTokenForm();
window.addEventListener('hashchange', () => void render());
void render();
