/** Terminal renderings of a run diff and of recalled runs. */
import type { RunDiff, SideSummary } from '../diff/types.js';
import type { RecallResult } from '../recall/types.js';

const side = (label: string, s: SideSummary) =>
  `${label} ${s.run}: ${s.steps} steps, ${s.errors} errors, outcome ${s.outcome}` +
  `${s.tokens === null ? '' : `, ${s.tokens} tokens`}${s.cost_usd === null ? '' : `, $${s.cost_usd}`}` +
  `${s.duration_ns === null ? '' : `, ${(Number(s.duration_ns) / 1e6).toFixed(0)} ms`}${s.truncated ? ' (truncated)' : ''}`;

export function formatDiff(diff: RunDiff): string {
  const lines = [side('a', diff.a), side('b', diff.b), ''];
  lines.push(
    diff.first_divergence
      ? `first divergence (${diff.first_divergence.kind}): ${diff.first_divergence.explanation}`
      : 'no divergence: the runs did the same',
  );
  lines.push('');
  for (const step of diff.aligned) {
    const where = `${`${step.a ?? '-'}`.padStart(4)} ${`${step.b ?? '-'}`.padStart(4)}`;
    const what = step.fingerprint_a ?? step.fingerprint_b ?? '';
    lines.push(`${where}  ${(step.op + (step.why ? `/${step.why}` : '')).padEnd(17)} ${what}`);
  }
  if (diff.truncated) lines.push('(truncated: at least one side was longer than the compared bound)');
  return lines.join('\n');
}

export function formatRecall(result: RecallResult): string {
  const unindexed =
    result.unindexed_steps > 0
      ? [`(${result.unindexed_steps} steps stored before this search were not indexed yet: they were not searched)`]
      : [];
  if (result.runs.length === 0) return ['no run holds every word', ...unindexed].join('\n');
  const lines = result.runs.map((r) => {
    const head = `${r.run}  ${r.outcome}  score ${r.score}  ${r.steps} steps${r.cost_usd === null ? '' : `  $${r.cost_usd}`}`;
    return `${head}\n    ${r.skeleton.join(' → ')}${r.skeleton_truncated ? ' …' : ''}`;
  });
  if (result.truncated) lines.push('(truncated: more runs matched than were read)');
  return [...lines, ...unindexed].join('\n');
}
