/**
 * @module diff/summary
 * One side's figures and how a run ended.
 *
 * Figures cover every step read (up to the span bound), not only the steps compared:
 * - tokens: input + output of the model calls; null when one of them did not report both
 *   (a partial sum would understate the run). Agent steps are not counted: instrumentations
 *   that report tokens on an agent span report the sum of the calls inside it.
 * - cost_usd: `costOfSteps` (pricing/cost.ts).
 * - duration_ns: first start to last end — of all the run's spans when the tape carries
 *   `first_start_ns` / `last_end_ns`, else of its steps; null for an empty tape.
 * - errors: steps whose status is error.
 *
 * Outcome (`deriveOutcome`): tapes/run-outcome.ts, the store's rule, applied to the steps:
 * unknown when the run was cut at the span bound or has no steps; the run failed when a root
 * step (a span with no parent) or the step that ended last has status error, so an error the
 * run recovered from does not make it a failure. The view sees context spans too (a workflow wrapper that errored); steps alone cannot, so a
 * loader that has the view's outcome passes it as `outcome` on the tape and it is used as is
 * (a truncated side stays unknown either way).
 */
import type { Deadline } from '../deadline/deadline.js';
import type { Step } from '../normalize/step.js';
import { costOfSteps, roundUsd } from '../pricing/cost.js';
import type { PricingTable } from '../pricing/pricing-table.js';
import { runOutcome } from '../tapes/run-outcome.js';
import type { DiffDelta, DiffTape, Outcome, SideSummary } from './types.js';

export function summarizeSide(
  tape: DiffTape,
  pricing: PricingTable | null,
  nowNs: bigint,
  deadline: Deadline,
): SideSummary {
  const tick = deadline.checkEvery(1024, 'summarizing a run');
  const steps = tape.steps;
  let tokens: number | null = 0;
  let errors = 0;
  let first: bigint | null = null;
  let last: bigint | null = null;
  for (const step of steps) {
    tick();
    if (step.status === 'error') errors++;
    if (step.kind === 'llm' && tokens !== null) {
      const { input, output } = step.tokens;
      tokens = input === null || output === null ? null : tokens + input + output;
    }
    const end = step.start_ns + step.duration_ns;
    if (first === null || step.start_ns < first) first = step.start_ns;
    if (last === null || end > last) last = end;
  }
  first = tape.first_start_ns ?? first;
  last = tape.last_end_ns ?? last;
  return {
    run: tape.run,
    steps: steps.length,
    cost_usd: costOfSteps(steps, pricing, tick),
    tokens,
    duration_ns: first === null || last === null ? null : last - first,
    errors,
    outcome: tape.truncated
      ? 'unknown'
      : (tape.outcome ?? deriveOutcome(steps, { truncated: tape.truncated, lastEndNs: last, nowNs }, tick)),
    truncated: tape.truncated,
  };
}

export function deriveOutcome(
  steps: readonly Step[],
  run: { truncated: boolean; lastEndNs: bigint | null; nowNs: bigint },
  tick: () => void = () => {},
): Outcome {
  if (steps.length === 0 || run.lastEndNs === null) return 'unknown';
  return runOutcome({ lastEndNs: run.lastEndNs, failed: stepsFailed(steps, tick) }, run.truncated, run.nowNs);
}

/** A root step, or the step that ended last, has status error. */
function stepsFailed(steps: readonly Step[], tick: () => void): boolean {
  let lastEnding: Step | null = null;
  let lastEnd = 0n;
  for (const s of steps) {
    tick();
    const end = s.start_ns + s.duration_ns;
    if (lastEnding === null || end >= lastEnd) {
      lastEnding = s;
      lastEnd = end;
    }
    if (s.parent_span_id === null && s.status === 'error') return true;
  }
  return lastEnding !== null && lastEnding.status === 'error';
}

/** b minus a, field by field; null where either side is null. */
export function deltaOf(a: SideSummary, b: SideSummary): DiffDelta {
  return {
    cost_usd: a.cost_usd === null || b.cost_usd === null ? null : roundUsd(b.cost_usd - a.cost_usd),
    tokens: a.tokens === null || b.tokens === null ? null : b.tokens - a.tokens,
    duration_ns: a.duration_ns === null || b.duration_ns === null ? null : b.duration_ns - a.duration_ns,
    errors: b.errors - a.errors,
    steps: b.steps - a.steps,
  };
}
