/**
 * A replay's status while an agent runs against it: served and remaining model steps, the
 * call log, and the first strict divergence explained (which message, which field, where
 * the two texts part). Polled every second while the page is open.
 */
import { api, ApiFailure, runPath } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { count, when } from '../format.js';
import type { PageContext } from '../main.js';

interface Difference {
  at_char: number | null;
  field: string;
  got: string | null;
  message: number | null;
  recorded: string | null;
  role: string | null;
}

interface ReplayStatus {
  id: string;
  run: string;
  mode: string;
  served: number;
  remaining: number;
  calls: { at_ns: number; matched: boolean; step: number }[];
  diverged: {
    at_ns: number;
    step: number;
    expected_digest: string;
    got_digest: string;
    difference?: Difference;
  } | null;
  exhausted_calls: number;
  expires_at_ns: number;
  unreadable_tool_steps: number[];
}

const POLL_MS = 1000;

export function showReplays({ main }: PageContext): void {
  document.title = 'Replays · tapedeck';
  const input = h('input', { id: 'replay-id', name: 'id', placeholder: 'rp_…', required: true, spellcheck: 'false' });
  replaceChildren(
    main,
    h('h1', null, 'Replays'),
    h(
      'p',
      null,
      'A replay serves a recorded run back to an agent with no model calls. Start one from a run’s page, or open one by its id.',
    ),
    h(
      'form',
      {
        class: 'inline-form',
        onsubmit: (event: Event) => {
          event.preventDefault();
          location.hash = `#/replays/${encodeURIComponent(input.value.trim())}`;
        },
      },
      h('label', { for: 'replay-id' }, 'Replay id'),
      input,
      h('button', { type: 'submit' }, 'Open'),
    ),
  );
}

export async function showReplay({ main, segments, signal }: PageContext): Promise<void> {
  const id = segments[1];
  document.title = `Replay ${id} · tapedeck`;
  const panel = h('div', { class: 'replay' });
  const origin = location.origin;
  replaceChildren(
    main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/replays' }, 'Replays'), ' / '),
    h('h1', null, 'Replay ', h('code', null, id)),
    h(
      'dl',
      { class: 'facts' },
      h(
        'div',
        null,
        h('dt', null, 'OpenAI base URL'),
        h('dd', null, h('code', null, `${origin}/v1/replays/${id}/openai/v1`)),
      ),
      h(
        'div',
        null,
        h('dt', null, 'Anthropic base URL'),
        h('dd', null, h('code', null, `${origin}/v1/replays/${id}/anthropic`)),
      ),
    ),
    panel,
  );
  let timer = 0;
  const refresh = async () => {
    try {
      const status = await api<ReplayStatus>(`/v1/replays/${encodeURIComponent(id)}`, { signal });
      replaceChildren(panel, statusView(status));
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof ApiFailure && error.status === 404) {
        replaceChildren(
          panel,
          h(
            'p',
            { class: 'warning', role: 'status' },
            'No such replay: it expired (replays live one hour, in memory) or the id is wrong.',
          ),
        );
        return;
      }
      replaceChildren(panel, h('p', { class: 'failure', role: 'alert' }, (error as Error).message));
    }
    if (!signal.aborted) timer = window.setTimeout(refresh, POLL_MS);
  };
  signal.addEventListener('abort', () => window.clearTimeout(timer));
  await refresh();
}

function statusView(s: ReplayStatus): HTMLElement {
  const total = s.served + s.remaining;
  return h(
    'div',
    null,
    h(
      'dl',
      { class: 'facts' },
      h('div', null, h('dt', null, 'Run'), h('dd', null, h('a', { href: `#/runs/${runPath(s.run)}` }, s.run))),
      h('div', null, h('dt', null, 'Mode'), h('dd', null, s.mode)),
      h(
        'div',
        null,
        h('dt', null, 'Served'),
        h('dd', { class: 'served' }, `${count(s.served)} of ${count(total)} model steps`),
      ),
      h('div', null, h('dt', null, 'Remaining'), h('dd', { class: 'remaining' }, count(s.remaining))),
      h('div', null, h('dt', null, 'Calls past the end'), h('dd', null, count(s.exhausted_calls))),
      h('div', null, h('dt', null, 'Expires'), h('dd', null, when(s.expires_at_ns))),
      s.unreadable_tool_steps.length
        ? h(
            'div',
            null,
            h('dt', null, 'Tool steps tools/next cannot serve'),
            h('dd', null, s.unreadable_tool_steps.join(', ')),
          )
        : null,
    ),
    h('progress', { max: Math.max(total, 1), value: s.served, 'aria-label': 'model steps served' }),
    s.diverged
      ? divergence(s.diverged)
      : h(
          'p',
          { class: 'same' },
          s.mode === 'strict'
            ? 'No divergence so far.'
            : 'Loose mode: every call is served; the log says which matched.',
        ),
    h('h2', null, `Calls (${s.calls.length})`),
    s.calls.length === 0
      ? h('p', { class: 'empty' }, 'No model call served yet.')
      : h(
          'table',
          { class: 'calls' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Step', 'Matched', 'At'].map((l) => h('th', { scope: 'col' }, l)),
            ),
          ),
          h(
            'tbody',
            null,
            s.calls.map((c) =>
              h(
                'tr',
                { class: c.matched ? null : 'failed' },
                h('td', null, `#${c.step}`),
                h('td', null, c.matched ? 'yes' : 'no'),
                h('td', null, when(c.at_ns)),
              ),
            ),
          ),
        ),
  );
}

function divergence(d: NonNullable<ReplayStatus['diverged']>): HTMLElement {
  const diff = d.difference;
  return h(
    'div',
    { class: 'divergence', role: 'note' },
    h('h2', null, `Diverged at model step ${d.step}`),
    diff
      ? h(
          'div',
          null,
          h(
            'p',
            null,
            diff.message === null
              ? `The messages agree; the request option ${diff.field} differs.`
              : `Message ${diff.message}${diff.role ? ` (${diff.role})` : ''} differs in ${diff.field}${diff.at_char === null ? '' : ` from character ${diff.at_char}`}.`,
          ),
          h('div', { class: 'quotes' }, quote('Recorded', diff.recorded), quote('Sent', diff.got)),
        )
      : h('p', null, 'Later divergences carry digests only.'),
    h(
      'p',
      { class: 'fingerprint' },
      'expected ',
      h('code', null, d.expected_digest.slice(0, 12)),
      ', got ',
      h('code', null, d.got_digest.slice(0, 12)),
      ` at ${when(d.at_ns)}`,
    ),
  );
}

function quote(label: string, text: string | null): HTMLElement {
  return h('figure', null, h('figcaption', null, label), h('pre', { class: 'text' }, text ?? '(nothing)'));
}
