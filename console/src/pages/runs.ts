/**
 * The runs list: newest first, with outcome, steps, tokens, cost and duration; filtered by
 * outcome; older runs a page at a time. While the first page is shown it asks for the
 * newest runs every few seconds and puts new ones on top (and refreshes changed rows).
 */
import { api, runPath } from '../api.js';
import { announce, h, replaceChildren } from '../dom.js';
import { count, duration, tokens, usd, when } from '../format.js';
import type { PageContext } from '../main.js';
import type { Outcome, RunPage, RunSummary } from '../types.js';

const PAGE_SIZE = 50;
const POLL_MS = 3000;
const OUTCOMES: Outcome[] = ['success', 'failure', 'unknown'];

export async function showRuns({ main, params, signal }: PageContext): Promise<void> {
  document.title = 'Runs · tapedeck';
  const outcome = OUTCOMES.find((o) => o === params.get('outcome'));
  const query = (extra: Record<string, string>) => {
    const q = new URLSearchParams({ limit: String(PAGE_SIZE), ...extra });
    if (outcome) q.set('outcome', outcome);
    return `/v1/runs?${q}`;
  };
  const first = await api<RunPage>(query({}), { signal });

  const rows = new Map<string, HTMLTableRowElement>();
  const body = h('tbody');
  const addRow = (run: RunSummary, where: 'top' | 'bottom', fresh = false) => {
    const row = runRow(run);
    if (fresh) row.classList.add('fresh');
    const old = rows.get(run.run);
    if (old) old.remove();
    rows.set(run.run, row);
    if (where === 'top') body.prepend(row);
    else body.append(row);
  };
  for (const run of first.runs) addRow(run, 'bottom');

  const filter = h(
    'form',
    { class: 'filters', role: 'search', 'aria-label': 'Filter runs' },
    h('label', { for: 'outcome-filter' }, 'Outcome'),
    h(
      'select',
      {
        id: 'outcome-filter',
        name: 'outcome',
        onchange: (event: Event) => {
          const value = (event.target as HTMLSelectElement).value;
          location.hash = value ? `#/?outcome=${value}` : '#/';
        },
      },
      h('option', { value: '' }, 'any'),
      OUTCOMES.map((o) => h('option', { value: o, selected: o === outcome }, o)),
    ),
  );

  let cursor = first.next_cursor;
  const more = h('button', { type: 'button', class: 'more' }, 'Older runs');
  more.hidden = cursor === null;
  more.addEventListener('click', async () => {
    if (!cursor) return;
    more.disabled = true;
    const page = await api<RunPage>(query({ cursor }), { signal });
    for (const run of page.runs) if (!rows.has(run.run)) addRow(run, 'bottom');
    cursor = page.next_cursor;
    more.disabled = false;
    more.hidden = cursor === null;
    announce(`${page.runs.length} older runs shown`);
  });

  const empty = h(
    'p',
    { class: 'empty' },
    outcome ? `No runs with outcome ${outcome}.` : 'No runs yet. Point an agent’s OTLP exporter here.',
  );
  empty.hidden = first.runs.length > 0;
  const table = h(
    'table',
    { class: 'runs' },
    h('caption', { class: 'visually-hidden' }, 'Runs, newest first'),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        ['Run', 'Outcome', 'Steps', 'Tokens', 'Cost', 'Duration', 'Ended'].map((label) =>
          h('th', { scope: 'col' }, label),
        ),
      ),
    ),
    body,
  );
  replaceChildren(
    main,
    h('h1', null, 'Runs'),
    h('div', { class: 'toolbar' }, filter, h('span', { class: 'live', 'aria-hidden': 'true' }, '● live')),
    empty,
    h('div', { class: 'scroll' }, table),
    more,
  );

  // Live: the newest page again, every few seconds, while this page is open and visible.
  const poll = async () => {
    if (signal.aborted) return;
    if (document.visibilityState === 'visible') {
      try {
        const page = await api<RunPage>(query({}), { signal });
        const fresh = page.runs.filter((r) => !rows.has(r.run));
        for (const run of page.runs.slice().reverse()) {
          if (!rows.has(run.run)) addRow(run, 'top', true);
          else refreshRow(rows, run);
        }
        if (fresh.length) {
          empty.hidden = true;
          announce(`${fresh.length} new run${fresh.length === 1 ? '' : 's'}`);
        }
      } catch {
        // a failed poll is retried at the next tick
      }
    }
    if (!signal.aborted) timer = window.setTimeout(poll, POLL_MS);
  };
  let timer = window.setTimeout(poll, POLL_MS);
  signal.addEventListener('abort', () => window.clearTimeout(timer));
}

function refreshRow(rows: Map<string, HTMLTableRowElement>, run: RunSummary): void {
  const old = rows.get(run.run)!;
  const row = runRow(run);
  if (old.dataset.signature === row.dataset.signature) return;
  old.replaceWith(row);
  rows.set(run.run, row);
}

function runRow(run: RunSummary): HTMLTableRowElement {
  const row = h(
    'tr',
    { class: run.outcome === 'failure' ? 'failed' : null },
    h(
      'td',
      { class: 'run-id' },
      h('a', { href: `#/runs/${runPath(run.run)}` }, run.run),
      run.parent_run
        ? h(
            'span',
            { class: 'sub' },
            ' ↳ child of ',
            h('a', { href: `#/runs/${runPath(run.parent_run)}` }, run.parent_run),
          )
        : null,
    ),
    h('td', null, h('span', { class: `badge outcome-${run.outcome}` }, run.outcome)),
    h(
      'td',
      { class: 'num' },
      count(run.steps),
      run.errors ? h('span', { class: 'errors' }, ` (${run.errors} failed)`) : null,
    ),
    h('td', { class: 'num' }, tokens(run.tokens)),
    h('td', { class: 'num' }, usd(run.cost_usd)),
    h('td', { class: 'num' }, duration(run.duration_ns)),
    h('td', null, when(run.last_end_ns)),
  );
  row.dataset.signature = JSON.stringify([
    run.outcome,
    run.steps,
    run.errors,
    run.tokens,
    run.cost_usd,
    run.last_end_ns,
  ]);
  return row;
}
