/**
 * Two runs side by side: their figures and deltas, then the aligned steps (op, why, each
 * side's step) with the first divergence highlighted and explained. Step details come from
 * both tapes, read beside the diff.
 */
import { api, ApiFailure, runPath } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { count, duration, usd } from '../format.js';
import type { PageContext } from '../main.js';
import type { Step, Tape } from '../types.js';

interface Side {
  run: string;
  steps: number;
  cost_usd: number | null;
  tokens: number | null;
  duration_ns: number | null;
  errors: number;
  outcome: string;
  truncated: boolean;
}

interface Aligned {
  op: 'same' | 'changed' | 'insert' | 'delete';
  why: string | null;
  a: number | null;
  b: number | null;
  fingerprint_a: string | null;
  fingerprint_b: string | null;
}

interface Diff {
  a: Side;
  b: Side;
  aligned: Aligned[];
  delta: {
    cost_usd: number | null;
    duration_ns: number | null;
    errors: number | null;
    steps: number | null;
    tokens: number | null;
  };
  first_divergence: { a: number | null; b: number | null; explanation: string; kind: string } | null;
  truncated: boolean;
}

export async function showDiff({ main, params, signal }: PageContext): Promise<void> {
  document.title = 'Diff · tapedeck';
  const a = params.get('a') ?? '';
  const b = params.get('b') ?? '';
  const form = diffForm(a, b);
  if (!a || !b) {
    replaceChildren(main, h('h1', null, 'Diff two runs'), form);
    return;
  }
  const [diff, tapeA, tapeB] = await Promise.all([
    api<Diff>(`/v1/diff?${new URLSearchParams({ a, b })}`, { signal }),
    api<Tape>(`/v1/tapes/${runPath(a)}`, { signal }).catch(() => null),
    api<Tape>(`/v1/tapes/${runPath(b)}`, { signal }).catch(() => null),
  ]).catch((error) => {
    if (error instanceof ApiFailure && error.status !== 401) {
      replaceChildren(
        main,
        h('h1', null, 'Diff two runs'),
        form,
        h('p', { class: 'failure', role: 'alert' }, error.message),
      );
      return [null, null, null] as const;
    }
    throw error;
  });
  if (!diff) return;
  const first = diff.first_divergence;
  const firstIndex = first ? diff.aligned.findIndex((e) => e.a === first.a && e.b === first.b && e.op !== 'same') : -1;

  replaceChildren(
    main,
    h('h1', null, 'Diff'),
    form,
    figures(diff),
    first
      ? h(
          'div',
          { class: 'divergence', role: 'note' },
          h('h2', null, `First divergence: ${first.kind}`),
          h('p', null, first.explanation),
          firstIndex >= 0
            ? h('a', { href: '#', onclick: jumpTo(`aligned-${firstIndex}`) }, 'Show it in the alignment')
            : null,
        )
      : h('p', { class: 'same' }, 'No divergence: every aligned step is the same.'),
    diff.truncated
      ? h('p', { class: 'warning' }, 'A side was cut at its step or span bound; the alignment covers its beginning.')
      : null,
    h('h2', null, 'Aligned steps'),
    h(
      'div',
      { class: 'scroll' },
      h(
        'table',
        { class: 'aligned' },
        h('caption', { class: 'visually-hidden' }, `Steps of ${a} and ${b}, aligned`),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ['Op', 'Why', `a: ${a}`, `b: ${b}`].map((label) => h('th', { scope: 'col' }, label)),
          ),
        ),
        h(
          'tbody',
          null,
          diff.aligned.map((entry, i) =>
            h(
              'tr',
              {
                id: `aligned-${i}`,
                class: `op-${entry.op}${i === firstIndex ? ' first-divergence' : ''}`,
                'aria-label': i === firstIndex ? 'first divergence' : null,
              },
              h('td', null, h('span', { class: `badge op op-${entry.op}` }, entry.op)),
              h('td', null, entry.why ?? ''),
              h('td', null, stepCell(a, entry.a, entry.fingerprint_a, tapeA)),
              h('td', null, stepCell(b, entry.b, entry.fingerprint_b, tapeB)),
            ),
          ),
        ),
      ),
    ),
  );
}

function jumpTo(id: string): (event: Event) => void {
  return (event) => {
    event.preventDefault();
    const row = document.getElementById(id);
    row?.scrollIntoView({ block: 'center' });
    row?.setAttribute('tabindex', '-1');
    row?.focus();
  };
}

function diffForm(a: string, b: string): HTMLElement {
  const inputA = h('input', { id: 'diff-a', name: 'a', value: a, required: true, spellcheck: 'false' });
  const inputB = h('input', { id: 'diff-b', name: 'b', value: b, required: true, spellcheck: 'false' });
  return h(
    'form',
    {
      class: 'inline-form',
      onsubmit: (event: Event) => {
        event.preventDefault();
        location.hash = `#/diff?${new URLSearchParams({ a: inputA.value.trim(), b: inputB.value.trim() })}`;
      },
    },
    h('label', { for: 'diff-a' }, 'Run a'),
    inputA,
    h('label', { for: 'diff-b' }, 'Run b'),
    inputB,
    h('button', { type: 'submit' }, 'Compare'),
  );
}

function figures(diff: Diff): HTMLElement {
  const signed = (n: number | null, show: (n: number) => string) =>
    n === null ? '—' : `${n > 0 ? '+' : ''}${show(n)}`;
  const rows: [string, (s: Side) => string, string][] = [
    ['Outcome', (s) => s.outcome, ''],
    ['Steps', (s) => count(s.steps), signed(diff.delta.steps, count)],
    ['Errors', (s) => count(s.errors), signed(diff.delta.errors, count)],
    ['Tokens', (s) => count(s.tokens), signed(diff.delta.tokens, count)],
    ['Cost', (s) => usd(s.cost_usd), signed(diff.delta.cost_usd, usd)],
    ['Duration', (s) => duration(s.duration_ns), signed(diff.delta.duration_ns, duration)],
  ];
  return h(
    'table',
    { class: 'figures' },
    h('caption', null, 'Figures (delta is b minus a)'),
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', { scope: 'col' }, ''),
        h('th', { scope: 'col' }, h('a', { href: `#/runs/${runPath(diff.a.run)}` }, diff.a.run)),
        h('th', { scope: 'col' }, h('a', { href: `#/runs/${runPath(diff.b.run)}` }, diff.b.run)),
        h('th', { scope: 'col' }, 'Delta'),
      ),
    ),
    h(
      'tbody',
      null,
      rows.map(([label, of, delta]) =>
        h(
          'tr',
          null,
          h('th', { scope: 'row' }, label),
          h('td', null, of(diff.a)),
          h('td', null, of(diff.b)),
          h('td', null, delta),
        ),
      ),
    ),
  );
}

function stepCell(run: string, index: number | null, fingerprint: string | null, tape: Tape | null): Node | string {
  if (index === null) return h('span', { class: 'missing' }, '—');
  const step: Step | undefined = tape?.steps.find((s) => s.index === index);
  return h(
    'div',
    { class: 'step-cell' },
    h('a', { href: `#/runs/${runPath(run)}` }, `#${index}`),
    ' ',
    step ? h('span', { class: 'name' }, step.name) : null,
    step && step.status === 'error' ? h('span', { class: 'badge status-error' }, 'error') : null,
    h('div', null, h('code', null, fingerprint ?? '')),
    step
      ? h(
          'div',
          { class: 'detail' },
          [step.model, step.tool].filter(Boolean).join(' '),
          ` · ${duration(step.duration_ns)}`,
        )
      : null,
  );
}
