/** Human-readable renderings for the terminal. */
import type { Tape } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import type { RunPage } from '../tapes/run-reader.js';
import type { ReconstructedRun } from '../runs/reconstruct.js';
import type { RunTree, RunTreeNode } from '../runs/tree.js';
import type { DatasetSummary } from '../runs/dataset.js';

const iso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();
const ms = (ns: bigint) => `${(Number(ns) / 1e6).toFixed(0)} ms`;

export function formatRuns(page: RunPage): string {
  if (page.runs.length === 0) return 'no runs';
  const lines = page.runs.map((r) => {
    const tokens =
      r.tokens.input === null && r.tokens.output === null ? '-' : `${r.tokens.input ?? '?'}/${r.tokens.output ?? '?'}`;
    return [
      r.run,
      iso(r.last_end_ns),
      r.outcome,
      `${plural(r.steps, 'step')} (${r.llm_steps} llm, ${r.tool_steps} tool)`,
      `tokens ${tokens}`,
      r.service ?? '',
    ]
      .join('  ')
      .trimEnd();
  });
  if (page.next_cursor) lines.push(`more: --cursor ${page.next_cursor}`);
  return lines.join('\n');
}

export function formatTape(tape: Tape): string {
  const head = `run ${tape.run}: ${plural(tape.steps.length, 'step')} from ${plural(tape.spans_examined, 'span')}${tape.truncated ? ' (truncated)' : ''}`;
  const lines = tape.steps.map((s) => {
    const what = s.kind === 'llm' ? (s.model ?? s.name) : s.kind === 'tool' ? (s.tool ?? s.name) : s.name;
    return `${String(s.index).padStart(3)}  ${s.kind.padEnd(5)} ${what}  ${s.status}  ${ms(s.duration_ns)}  ${s.fingerprint}`;
  });
  return [head, ...lines].join('\n');
}

/** One line of content for the terminal: JSON as compact JSON, newlines shown as ⏎, long text cut. */
function oneLine(value: JsonValue | undefined | null, max = 240): string {
  if (value === undefined || value === null) return '-';
  const text = (typeof value === 'string' ? value : JSON.stringify(value)).replace(/\r?\n/g, ' ⏎ ');
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

export function formatReconstruction(rec: ReconstructedRun): string {
  const lines = [
    `run ${rec.run}: ${rec.status} (${rec.status_reason})${rec.outcome ? `, outcome ${rec.outcome}` : ''}`,
    ...(rec.parent_run ? [`parent run ${rec.parent_run}`] : []),
    `${plural(rec.model_calls, 'model call')}${rec.model ? ` (${rec.model})` : ''}, ${plural(rec.tool_calls.length, 'tool call')}${rec.start_ns !== null ? `, started ${iso(rec.start_ns)}` : ''}`,
    '',
    'input',
    ...(rec.input ? rec.input.map((m) => `  [${m.role}] ${oneLine(m.content)}`) : ['  (not recorded)']),
  ];
  if (rec.tool_calls.length) {
    lines.push('', 'tool calls');
    rec.tool_calls.forEach((c, i) =>
      lines.push(
        `  ${i + 1}. ${c.name} ${oneLine(c.arguments, 120)} → ${oneLine(c.result, 160)}${c.id ? `  (${c.id})` : ''}`,
      ),
    );
  }
  lines.push('', 'output', `  ${rec.output === null ? '(none)' : oneLine(rec.output, 2000)}`);
  return lines.join('\n');
}

export function formatRunTree(tree: RunTree): string {
  const lines: string[] = [];
  const walk = (n: RunTreeNode, prefix: string, last: boolean, root: boolean) => {
    const answer = n.output === null ? '' : `  "${oneLine(n.output, 80)}"`;
    const cut = n.children_truncated ? '  (more children not shown)' : '';
    lines.push(
      `${root ? '' : `${prefix}${last ? '└── ' : '├── '}`}${n.run}  ${n.status}  ${plural(n.model_calls, 'model call')}, ${plural(n.tool_calls.length, 'tool call')}${answer}${cut}`,
    );
    const inner = root ? '' : `${prefix}${last ? '    ' : '│   '}`;
    n.children.forEach((c, i) => walk(c, inner, i === n.children.length - 1, false));
  };
  walk(tree.root, '', true, true);
  lines.push(
    `${plural(tree.run_count, 'run')}${tree.truncated ? ` (truncated: ${tree.truncated_by.join(', ')} limit)` : ''}`,
  );
  return lines.join('\n');
}

export function formatDatasetSummary(summary: DatasetSummary, destination: string): string {
  const skipped = Object.entries(summary.skipped).filter(([, n]) => n > 0);
  const total = skipped.reduce((a, [, n]) => a + n, 0);
  return [
    `exported ${summary.exported} of ${plural(summary.considered, 'run')} to ${destination}`,
    `skipped ${total}${skipped.length ? `: ${skipped.map(([reason, n]) => `${reason} ${n}`).join(', ')}` : ''}`,
  ].join('\n');
}
