/**
 * @module recall/rank
 * The pure half of recall: matched spans → the runs to read; a read run → its entry
 * (outcome, cause, skeleton, cost); entries → the ranking. No I/O, no clock (now is an
 * argument).
 *
 * - Runs to read: the newest matching spans grouped by run; the runs with the most matches
 *   among them, ties to the run matched most recently, then by run id.
 * - Outcome: tapes/run-outcome.ts, with now injected, over the run's last end and whether it
 *   failed as the store reads them; unknown too when the tape was cut at the span bound (how
 *   a run ended cannot be read from its beginning, so a long run that failed late is never a
 *   success on the strength of its start).
 * - Cause of a failure: the last step on the tape whose status is error — a tape lists a
 *   wrapper before what it wraps, so this is the innermost, latest error, where an agent's
 *   failure started. When no step errored (a workflow wrapper or another context span
 *   failed), the step that ended last: the last thing the run did. Its `status` says which.
 * - Skeleton: each step's signature (`kind:name`, the fingerprint without its input hash),
 *   consecutive repeats folded as "sig xN", at most maxEntries entries.
 * - Ranking: successes first, then more matching spans, then the most recent last span,
 *   then run id, so equal inputs always rank alike.
 */
import { signatureOf } from '../normalize/finish.js';
import type { Step, Tape } from '../normalize/step.js';
import { costOfSteps } from '../pricing/cost.js';
import type { PricingTable } from '../pricing/pricing-table.js';
import { type RunEnd, runOutcome } from '../tapes/run-outcome.js';
import type { OutcomeFilter, RecallCause, RecalledRun } from './types.js';

export interface MatchedSpan {
  run: string;
  end_ns: bigint;
}

export interface RunMatches {
  run: string;
  /** matching spans of the run among those grouped */
  score: number;
  newestEndNs: bigint;
}

/** The runs to read, most matches first; overflow when more runs matched than maxRuns. */
export function groupMatches(
  matches: readonly MatchedSpan[],
  maxRuns: number,
): { runs: RunMatches[]; overflow: boolean } {
  const byRun = new Map<string, RunMatches>();
  for (const m of matches) {
    const entry = byRun.get(m.run);
    if (!entry) byRun.set(m.run, { run: m.run, score: 1, newestEndNs: m.end_ns });
    else {
      entry.score++;
      if (m.end_ns > entry.newestEndNs) entry.newestEndNs = m.end_ns;
    }
  }
  const runs = [...byRun.values()].sort(
    (a, b) => b.score - a.score || compareBigDesc(a.newestEndNs, b.newestEndNs) || compareText(a.run, b.run),
  );
  return { runs: runs.slice(0, maxRuns), overflow: runs.length > maxRuns };
}

/** Consecutive repeats folded ("tool:search x3"), at most maxEntries entries. */
export function foldSkeleton(
  signatures: Iterable<string>,
  maxEntries: number,
  tick: () => void = () => {},
): { skeleton: string[]; truncated: boolean } {
  const skeleton: string[] = [];
  let current: string | null = null;
  let count = 0;
  let truncated = false;
  const flush = (): boolean => {
    if (current === null) return true;
    if (skeleton.length >= maxEntries) return false;
    skeleton.push(count > 1 ? `${current} x${count}` : current);
    return true;
  };
  for (const sig of signatures) {
    tick();
    if (sig === current) {
      count++;
      continue;
    }
    if (!flush()) {
      truncated = true;
      break;
    }
    current = sig;
    count = 1;
  }
  if (!truncated && !flush()) truncated = true;
  return { skeleton, truncated };
}

/** The step a failure is attributed to (rule in the module comment); null for an empty tape. */
export function causeOf(steps: readonly Step[]): RecallCause | null {
  let chosen: Step | null = null;
  for (let i = steps.length - 1; i >= 0; i--) {
    if (steps[i].status === 'error') {
      chosen = steps[i];
      break;
    }
  }
  if (chosen === null) {
    let lastEnd = -1n;
    for (const s of steps) {
      const end = s.start_ns + s.duration_ns;
      if (end >= lastEnd) {
        chosen = s;
        lastEnd = end;
      }
    }
  }
  if (chosen === null) return null;
  return { index: chosen.index, signature: signatureOf(chosen), span_id: chosen.span_id, status: chosen.status };
}

export interface EntryOptions {
  pricing: PricingTable | null;
  nowNs: bigint;
  maxSkeletonEntries: number;
  tick?: () => void;
}

/** A read run's entry in the answer. */
export function recallEntry(tape: Tape, matches: RunMatches, facts: RunEnd, options: EntryOptions): RecalledRun {
  const tick = options.tick ?? (() => {});
  const outcome = runOutcome(facts, tape.truncated, options.nowNs);
  const { skeleton, truncated: skeletonTruncated } = foldSkeleton(
    tape.steps.map(signatureOf),
    options.maxSkeletonEntries,
    tick,
  );
  const entry: RecalledRun = {
    run: tape.run,
    tenant: tape.tenant,
    outcome,
    outcome_source: 'derived',
    score: matches.score,
    last_end_ns: facts.lastEndNs,
    steps: tape.steps.length,
    cost_usd: costOfSteps(tape.steps, options.pricing, tick),
    skeleton,
    skeleton_truncated: skeletonTruncated,
    truncated: tape.truncated,
  };
  if (outcome === 'failure') {
    const cause = causeOf(tape.steps);
    if (cause) entry.cause = cause;
  }
  return entry;
}

/** Successes first, then more matching spans, then the most recent, then run id. */
export function rankRuns(runs: readonly RecalledRun[]): RecalledRun[] {
  const tier = (r: RecalledRun) => (r.outcome === 'success' ? 0 : 1);
  return [...runs].sort(
    (a, b) =>
      tier(a) - tier(b) ||
      b.score - a.score ||
      compareBigDesc(a.last_end_ns, b.last_end_ns) ||
      compareText(a.run, b.run),
  );
}

export function keepOutcome(runs: readonly RecalledRun[], filter: OutcomeFilter): RecalledRun[] {
  return filter === 'any' ? [...runs] : runs.filter((r) => r.outcome === filter);
}

function compareBigDesc(a: bigint, b: bigint): number {
  return a === b ? 0 : a > b ? -1 : 1;
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
