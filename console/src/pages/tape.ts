/**
 * A run's tape: what the run was (its reconstruction's status and answer), then each step in
 * order — kind, name, model, status, tokens, latency — with its request and response.
 * Offloaded values load on demand from the same tape read with resolve=true, once per page.
 * From here: the run's tree, a diff against another run, and a replay of it.
 */
import { api, runPath } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { renderValue } from '../content.js';
import { count, duration, usd, when } from '../format.js';
import type { PageContext } from '../main.js';
import type { Reconstruction, Step, Tape } from '../types.js';

export async function showTape({ main, segments, signal }: PageContext): Promise<void> {
  const run = segments[1];
  document.title = `${run} · tapedeck`;
  const [tape, facts] = await Promise.all([
    api<Tape>(`/v1/tapes/${runPath(run)}`, { signal }),
    api<Reconstruction>(`/v1/runs/${runPath(run)}/reconstruct`, { signal }).catch(() => null),
  ]);

  let resolved: Promise<Tape> | undefined;
  const loadSide = (index: number, side: 'request' | 'response') => async () => {
    resolved ??= api<Tape>(`/v1/tapes/${runPath(run)}?resolve=true`, { signal });
    const full = await resolved.catch((error) => {
      resolved = undefined;
      throw error;
    });
    return full.steps.find((s) => s.index === index)?.[side];
  };

  replaceChildren(
    main,
    h('p', { class: 'crumbs' }, h('a', { href: '#/' }, 'Runs'), ' / '),
    h('h1', { class: 'run-title' }, run),
    summary(run, tape, facts),
    actions(run, facts),
    tape.truncated
      ? h(
          'p',
          { class: 'warning' },
          `This tape holds the steps among the run's first ${count(tape.spans_examined)} spans; the run has more.`,
        )
      : null,
    h('h2', null, `Steps (${tape.steps.length})`),
    tape.steps.length === 0
      ? h('p', { class: 'empty' }, 'No steps: no span of this run was a model call, tool call or agent.')
      : null,
    h(
      'ol',
      { class: 'steps' },
      tape.steps.map((step) => stepItem(step, loadSide)),
    ),
  );
}

function summary(run: string, tape: Tape, facts: Reconstruction | null): HTMLElement {
  const items: [string, Node | string][] = [];
  if (facts) {
    items.push(['Outcome', h('span', { class: `badge outcome-${facts.outcome}` }, facts.outcome)]);
    items.push([
      'Status',
      h('span', null, h('span', { class: `badge status-${facts.status}` }, facts.status), ` — ${facts.status_reason}`),
    ]);
    if (facts.parent_run)
      items.push(['Parent run', h('a', { href: `#/runs/${runPath(facts.parent_run)}` }, facts.parent_run)]);
    items.push(['Started', when(facts.start_ns)]);
    if (facts.start_ns !== null && facts.end_ns !== null)
      items.push(['Duration', duration(facts.end_ns - facts.start_ns)]);
  }
  const input = tape.steps.reduce((n, s) => n + (s.tokens.input ?? 0), 0);
  const output = tape.steps.reduce((n, s) => n + (s.tokens.output ?? 0), 0);
  items.push([
    'Steps',
    `${count(tape.steps.length)} (${tape.steps.filter((s) => s.status === 'error').length} failed)`,
  ]);
  items.push(['Tokens', `${count(input)} in / ${count(output)} out`]);
  const list = h('dl', { class: 'facts', 'aria-label': `Summary of ${run}` });
  for (const [term, value] of items) list.append(h('div', null, h('dt', null, term), h('dd', null, value)));
  const answer = facts?.output
    ? h('div', { class: 'final' }, h('h2', null, 'Final answer'), h('pre', { class: 'text' }, facts.output))
    : null;
  return h('section', { class: 'summary' }, list, answer);
}

function actions(run: string, facts: Reconstruction | null): HTMLElement {
  const other = h('input', {
    id: 'diff-other',
    name: 'b',
    placeholder: 'another run id',
    required: true,
    spellcheck: 'false',
  });
  const diffForm = h(
    'form',
    {
      class: 'inline-form',
      onsubmit: (event: Event) => {
        event.preventDefault();
        location.hash = `#/diff?${new URLSearchParams({ a: run, b: (other as HTMLInputElement).value.trim() })}`;
      },
    },
    h('label', { for: 'diff-other' }, 'Diff with'),
    other,
    h('button', { type: 'submit' }, 'Compare'),
  );
  const replayButton = (mode: 'strict' | 'loose') =>
    h(
      'button',
      {
        type: 'button',
        onclick: async (event: Event) => {
          const button = event.currentTarget as HTMLButtonElement;
          button.disabled = true;
          try {
            const created = await api<{ id: string }>('/v1/replays', { method: 'POST', body: { run, mode } });
            location.hash = `#/replays/${encodeURIComponent(created.id)}`;
          } catch (error) {
            button.disabled = false;
            button.after(h('span', { class: 'failure', role: 'alert' }, ` ${(error as Error).message}`));
          }
        },
      },
      `Replay (${mode})`,
    );
  return h(
    'div',
    { class: 'actions' },
    h(
      'a',
      { class: 'button', href: `#/runs/${runPath(facts?.parent_run ?? run)}/tree` },
      facts?.parent_run ? 'Run tree (from parent)' : 'Run tree',
    ),
    diffForm,
    replayButton('strict'),
    replayButton('loose'),
  );
}

type LoadSide = (index: number, side: 'request' | 'response') => () => Promise<unknown>;

function stepItem(step: Step, load: LoadSide): HTMLElement {
  const failed = step.status === 'error';
  const what = step.kind === 'llm' ? step.model : step.kind === 'tool' ? step.tool : null;
  const tokenText =
    step.tokens.input === null && step.tokens.output === null
      ? null
      : `${count(step.tokens.input)} in / ${count(step.tokens.output)} out`;
  const [requestLabel, responseLabel] =
    step.kind === 'llm'
      ? ['Request', 'Response']
      : step.kind === 'tool'
        ? ['Arguments', 'Result']
        : ['Input', 'Output'];
  return h(
    'li',
    { class: `step kind-${step.kind}${failed ? ' failed' : ''}`, id: `step-${step.index}` },
    h(
      'div',
      { class: 'step-head' },
      h('span', { class: 'index' }, `#${step.index}`),
      h('span', { class: `badge kind kind-${step.kind}` }, step.kind),
      h('span', { class: 'name' }, step.name),
      what && what !== step.name ? h('code', { class: 'model' }, what) : null,
      h('span', { class: `badge status-${step.status}` }, failed ? 'error' : step.status),
      tokenText ? h('span', { class: 'tokens' }, tokenText) : null,
      h('span', { class: 'latency' }, duration(step.duration_ns)),
      step.cost_usd !== null ? h('span', { class: 'cost' }, usd(step.cost_usd)) : null,
    ),
    h(
      'div',
      { class: 'step-body' },
      h(
        'section',
        { class: 'side' },
        h('h3', null, requestLabel),
        renderValue(step.request, load(step.index, 'request'), requestLabel.toLowerCase()),
      ),
      h(
        'section',
        { class: 'side' },
        h('h3', null, responseLabel),
        renderValue(step.response, load(step.index, 'response'), responseLabel.toLowerCase()),
      ),
    ),
    h('p', { class: 'fingerprint' }, h('code', null, step.fingerprint), ` · ${step.layout}`),
  );
}
