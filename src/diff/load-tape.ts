/**
 * @module diff/load-tape
 * A run's tape with the run-level facts the diff needs beyond its steps (first start and
 * last end over every span, wrappers included, and the store's outcome), for the route and
 * the CLI alike. Every read spends the request's deadline: its signal goes to each query, so
 * a read still running when the budget runs out (or the answer has been sent) is stopped in
 * the database too, not only abandoned.
 */
import type { Deadline } from '../deadline/deadline.js';
import type { TapeDeps } from '../tapes/tape-service.js';
import { readTape } from '../tapes/tape-service.js';
import { getRun } from '../tapes/run-reader.js';
import type { DiffTape } from './types.js';

export async function loadDiffTape(
  deps: TapeDeps,
  tenant: string,
  run: string,
  options: { maxSpans: number; deadline: Deadline },
): Promise<DiffTape | undefined> {
  const { deadline } = options;
  const tape = await readTape(deps, tenant, run, { maxSpans: options.maxSpans, signal: deadline.signal });
  if (!tape) return undefined;
  deadline.check('reading the runs');
  const summary = await getRun(deps.db, tenant, run, { signal: deadline.signal });
  return {
    ...tape,
    first_start_ns: summary?.first_start_ns ?? null,
    last_end_ns: summary?.last_end_ns ?? null,
    // How a run ended cannot be read from its beginning.
    outcome: tape.truncated ? 'unknown' : summary?.outcome,
  };
}
