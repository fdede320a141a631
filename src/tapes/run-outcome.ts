/**
 * @module tapes/run-outcome
 * A run's outcome, for readers that judge it in memory. The stored runs' rule is SQL
 * (tapedeck_store.run_outcome and run_failed, migrations 0002 and 0012): 'unknown' while the
 * run may still be running (its last span ended within ACTIVE_WINDOW_NS), else 'failure'
 * when it failed (a span that starts the run, or the one that ended last, has status error),
 * else 'success'. A capped read cannot see every span, so its outcome is 'unknown' too.
 * test/integration/run-outcome.test.ts holds this module and the SQL rule equal.
 */

export type RunOutcome = 'success' | 'failure' | 'unknown';

/** How long after its last span ends a run may still be running (the SQL rule's 900 s). */
export const ACTIVE_WINDOW_NS = 15n * 60n * 1_000_000_000n;

export interface RunEnd {
  /** end of the run's last span */
  lastEndNs: bigint;
  /** the run failed by the rule above */
  failed: boolean;
}

/** null: nothing of the run was read. truncated: the read was capped and may miss spans. */
export function runOutcome(end: RunEnd | null, truncated: boolean, nowNs: bigint): RunOutcome {
  if (truncated || end === null) return 'unknown';
  if (nowNs - end.lastEndNs < ACTIVE_WINDOW_NS) return 'unknown';
  return end.failed ? 'failure' : 'success';
}
