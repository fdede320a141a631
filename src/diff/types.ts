/**
 * @module diff/types
 * The shape `GET /v1/diff` answers (docs/api.md), rendered with sorted
 * keys. Every aligned entry carries the same six keys; the side a step is missing from has
 * `null` for its index and fingerprint, and `why` is null for `same`.
 */
import type { Deadline } from '../deadline/deadline.js';
import type { Tape } from '../normalize/step.js';
import type { PricingTable } from '../pricing/pricing-table.js';

export type DiffOp = 'same' | 'changed' | 'insert' | 'delete';
/** input, decision and config go with `changed`; structure with `insert` / `delete` */
export type DiffWhy = 'input' | 'decision' | 'config' | 'structure';
import type { RunOutcome } from '../tapes/run-outcome.js';

export type Outcome = RunOutcome;

export interface AlignedStep {
  op: DiffOp;
  why: DiffWhy | null;
  /** step index on run a; null for an insert */
  a: number | null;
  /** step index on run b; null for a delete */
  b: number | null;
  fingerprint_a: string | null;
  fingerprint_b: string | null;
}

export interface FirstDivergence {
  a: number | null;
  b: number | null;
  kind: DiffWhy;
  /** plain language: which steps, what kind of difference, a short digest of each side */
  explanation: string;
}

export interface SideSummary {
  run: string;
  /** steps read (up to the span bound), not only the steps compared */
  steps: number;
  /** metered or priced cost; null when any model call's cost is unknown */
  cost_usd: number | null;
  /** input + output tokens of the model calls; null when any model call did not report them */
  tokens: number | null;
  /** first start to last end; null for a run with nothing to measure */
  duration_ns: bigint | null;
  /** steps whose status is error */
  errors: number;
  outcome: Outcome;
  /** the run was longer than the span bound: every figure above describes its beginning */
  truncated: boolean;
}

/** b minus a; null where either side is null. */
export interface DiffDelta {
  cost_usd: number | null;
  tokens: number | null;
  duration_ns: bigint | null;
  errors: number;
  steps: number;
}

export interface RunDiff {
  a: SideSummary;
  b: SideSummary;
  aligned: AlignedStep[];
  first_divergence: FirstDivergence | null;
  delta: DiffDelta;
  /** a side had more steps than were compared, or was itself truncated */
  truncated: boolean;
}

/**
 * A tape, optionally with facts about all of its run's spans (context spans included, such as
 * a workflow wrapper) that the steps alone cannot tell. When present they are used for the
 * duration and the outcome; otherwise both are derived from the steps.
 */
export interface DiffTape extends Tape {
  first_start_ns?: bigint | null;
  last_end_ns?: bigint | null;
  /** the run's outcome over all its spans (the store's `runs` view), when the loader has it */
  outcome?: Outcome;
}

export interface DiffOptions {
  deadline: Deadline;
  pricing: PricingTable | null;
  /** wall-clock now in Unix nanoseconds: a run whose last span ended within 15 minutes is unknown */
  nowNs: bigint;
  /** steps compared per side; default 5,000 */
  maxSteps?: number;
}

export const DEFAULT_MAX_DIFF_STEPS = 5_000;
/** spans read per side; the loader is asked for at most this many */
export const DEFAULT_MAX_DIFF_SPANS = 50_000;
