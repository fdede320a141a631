/** Human-readable renderings for the terminal. */
import type { Tape } from '../normalize/step.js';
import type { RunPage } from '../tapes/run-reader.js';

const iso = (ns: bigint) => new Date(Number(ns / 1_000_000n)).toISOString();
const ms = (ns: bigint) => `${(Number(ns) / 1e6).toFixed(0)} ms`;

export function formatRuns(page: RunPage): string {
  if (page.runs.length === 0) return 'no runs';
  const lines = page.runs.map((r) => {
    const tokens = r.tokens.input === null && r.tokens.output === null ? '-' : `${r.tokens.input ?? '?'}/${r.tokens.output ?? '?'}`;
    return [r.run, iso(r.last_end_ns), r.outcome, `${r.steps} steps (${r.llm_steps} llm, ${r.tool_steps} tool)`, `tokens ${tokens}`, r.service ?? '']
      .join('  ')
      .trimEnd();
  });
  if (page.next_cursor) lines.push(`more: --cursor ${page.next_cursor}`);
  return lines.join('\n');
}

export function formatTape(tape: Tape): string {
  const head = `run ${tape.run}: ${tape.steps.length} steps from ${tape.spans_examined} spans${tape.truncated ? ' (truncated)' : ''}`;
  const lines = tape.steps.map((s) => {
    const what = s.kind === 'llm' ? s.model ?? s.name : s.kind === 'tool' ? s.tool ?? s.name : s.name;
    return `${String(s.index).padStart(3)}  ${s.kind.padEnd(5)} ${what}  ${s.status}  ${ms(s.duration_ns)}  ${s.fingerprint}`;
  });
  return [head, ...lines].join('\n');
}
