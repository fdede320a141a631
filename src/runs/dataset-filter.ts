/**
 * @module runs/dataset-filter
 * The export's filters as the CLI (`--since --until --outcome --merge-user-turns`) and the
 * API (`?since=&until=&outcome=&merge_user_turns=`) take them: times in ISO 8601 or Unix ns
 * (time-bound.ts) on the run's start, `until` exclusive; outcome success (default), failure
 * or any; whether consecutive user turns are joined into one (default no).
 */
import { OUTCOME_FILTERS, type DatasetFilter, type OutcomeFilter } from './dataset.js';
import { parseTimeBound, TimeBoundError } from './time-bound.js';

export class DatasetFilterError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DatasetFilterError';
  }
}

export function datasetFilterOf(raw: {
  since?: string;
  until?: string;
  outcome?: string;
  mergeUserTurns?: boolean;
}): DatasetFilter {
  const outcome = raw.outcome === undefined || raw.outcome === '' ? 'success' : raw.outcome;
  if (!OUTCOME_FILTERS.includes(outcome as OutcomeFilter)) {
    throw new DatasetFilterError(
      `outcome must be one of ${OUTCOME_FILTERS.join(', ')}, got ${JSON.stringify(raw.outcome)}`,
    );
  }
  try {
    const since = raw.since ? parseTimeBound('since', raw.since) : null;
    const until = raw.until ? parseTimeBound('until', raw.until) : null;
    if (since !== null && until !== null && since >= until) throw new DatasetFilterError('since must be before until');
    return { since, until, outcome: outcome as OutcomeFilter, mergeUserTurns: raw.mergeUserTurns === true };
  } catch (error) {
    if (error instanceof TimeBoundError) throw new DatasetFilterError(error.message);
    throw error;
  }
}
