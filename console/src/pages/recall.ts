/**
 * Recall: "has this been done before?". A search box (any script: words are matched as the
 * API's recall matches them) and the runs found, each with its outcome and skeleton.
 */
import { api, runPath } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { count, usd, when } from '../format.js';
import type { PageContext } from '../main.js';

interface Found {
  run: string;
  outcome: string;
  score: number;
  steps: number;
  cost_usd: number | null;
  last_end_ns: number;
  skeleton: string[];
  skeleton_truncated: boolean;
  cause?: { index: number; signature: string; status: string };
}

export async function showRecall({ main, params, signal }: PageContext): Promise<void> {
  const q = params.get('q') ?? '';
  const outcome = params.get('outcome') ?? 'any';
  document.title = q ? `Recall “${q}” · tapedeck` : 'Recall · tapedeck';
  const input = h('input', {
    id: 'recall-q',
    name: 'q',
    type: 'search',
    value: q,
    required: true,
    spellcheck: 'false',
    dir: 'auto',
  });
  const select = h(
    'select',
    { id: 'recall-outcome', name: 'outcome' },
    ['any', 'success', 'failure'].map((o) => h('option', { value: o, selected: o === outcome }, o)),
  );
  const form = h(
    'form',
    {
      class: 'inline-form',
      role: 'search',
      onsubmit: (event: Event) => {
        event.preventDefault();
        location.hash = `#/recall?${new URLSearchParams({ q: input.value, outcome: select.value })}`;
      },
    },
    h('label', { for: 'recall-q' }, 'Words'),
    input,
    h('label', { for: 'recall-outcome' }, 'Outcome'),
    select,
    h('button', { type: 'submit' }, 'Search'),
  );
  if (!q.trim()) {
    replaceChildren(
      main,
      h('h1', null, 'Recall'),
      form,
      h('p', null, 'Find earlier runs whose recorded text holds every word.'),
    );
    return;
  }
  const answer = await api<{ runs: Found[]; truncated: boolean; unindexed_steps: number }>(
    `/v1/recall?${new URLSearchParams({ q, outcome })}`,
    { signal },
  );
  replaceChildren(
    main,
    h('h1', null, 'Recall'),
    form,
    h(
      'p',
      { role: 'status' },
      `${answer.runs.length} run${answer.runs.length === 1 ? '' : 's'} found for “`,
      h('span', { dir: 'auto' }, q),
      '”.',
    ),
    answer.truncated
      ? h('p', { class: 'warning' }, 'More runs matched than were read; add a word to narrow it.')
      : null,
    answer.unindexed_steps
      ? h('p', { class: 'warning' }, `${answer.unindexed_steps} recent steps are not indexed yet; ask again shortly.`)
      : null,
    h(
      'ol',
      { class: 'found' },
      answer.runs.map((r) =>
        h(
          'li',
          { class: r.outcome === 'failure' ? 'failed' : null },
          h(
            'div',
            { class: 'found-head' },
            h('a', { href: `#/runs/${runPath(r.run)}` }, r.run),
            ' ',
            h('span', { class: `badge outcome-${r.outcome}` }, r.outcome),
            h(
              'span',
              { class: 'detail' },
              ` score ${r.score} · ${count(r.steps)} steps · ${usd(r.cost_usd)} · ended ${when(r.last_end_ns)}`,
            ),
          ),
          h(
            'ol',
            { class: 'skeleton', 'aria-label': 'skeleton' },
            r.skeleton.map((s) => h('li', null, h('code', null, s))),
            r.skeleton_truncated ? h('li', null, '…') : null,
          ),
          r.cause
            ? h('p', { class: 'cause' }, `failed at step ${r.cause.index} (${r.cause.signature}, ${r.cause.status})`)
            : null,
        ),
      ),
    ),
  );
}
