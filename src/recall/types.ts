/**
 * @module recall/types
 * The shape `GET /v1/recall` answers (docs/api.md) and
 * the bounds it works within. Keys are rendered sorted; nanoseconds as exact integers.
 */

import type { RunOutcome } from '../tapes/run-outcome.js';

export type Outcome = RunOutcome;
export type OutcomeFilter = 'success' | 'failure' | 'any';

/** The step a failed run's failure is attributed to. */
export interface RecallCause {
  /** the step's index on the run's tape */
  index: number;
  /** `kind:name`, as in the skeleton */
  signature: string;
  span_id: string;
  /** the step's own status: `error`, or `ok`/`unset` when no step errored (see rank.ts) */
  status: string;
}

export interface RecalledRun {
  run: string;
  tenant: string | null;
  outcome: Outcome;
  /** how the outcome is known: `derived` from the spans' statuses (no declaration is read yet) */
  outcome_source: 'derived';
  /** the run's spans that matched, among the newest matches grouped */
  score: number;
  /** end of the run's last span (all its spans, even when the tape was cut) */
  last_end_ns: bigint;
  /** steps on the tape read */
  steps: number;
  /** metered or priced cost of the steps read; null when a model call's cost is unknown */
  cost_usd: number | null;
  /** step signatures in order, consecutive repeats folded ("tool:search x3") */
  skeleton: string[];
  skeleton_truncated: boolean;
  /** the run has more spans than were read: steps, cost and skeleton describe its beginning */
  truncated: boolean;
  /** present on failed runs */
  cause?: RecallCause;
}

export interface RecallResult {
  runs: RecalledRun[];
  /** matches overflowed the newest-matches bound, or more runs matched than were read */
  truncated: boolean;
  /**
   * steps stored before the query that recall's index did not hold yet and that could not be
   * indexed within half of the query's budget: this answer could not find them (0: none)
   */
  unindexed_steps: number;
}

export interface RecallBounds {
  /** newest matching spans grouped into runs (seed: 5,000) */
  maxMatchingSpans: number;
  /** runs read in full, those with the most matches (seed: 100) */
  maxRunsRead: number;
  /** spans read per run (seed: 20,000) */
  maxSpansPerRun: number;
  /** a query matching more spans than this is refused (seed: 200,000) */
  maxTotalMatches: number;
  /** skeleton entries after folding (seed: 40) */
  maxSkeletonEntries: number;
  /** words in one query */
  maxQueryTerms: number;
}

export const DEFAULT_RECALL_BOUNDS: RecallBounds = Object.freeze({
  maxMatchingSpans: 5_000,
  maxRunsRead: 100,
  maxSpansPerRun: 20_000,
  maxTotalMatches: 200_000,
  maxSkeletonEntries: 40,
  maxQueryTerms: 32,
});
