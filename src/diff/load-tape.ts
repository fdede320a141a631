/**
 * @module diff/load-tape
 * A run's tape with the run-level facts the diff needs beyond its steps (first start and
 * last end over every span, wrappers included, and the store's outcome), for the route and
 * the CLI alike.
 */
import type { TapeDeps } from '../tapes/tape-service.js';
import { readTape } from '../tapes/tape-service.js';
import { getRun } from '../tapes/run-reader.js';
import type { DiffTape } from './types.js';

export async function loadDiffTape(
  deps: TapeDeps,
  tenant: string,
  run: string,
  options: { maxSpans: number },
): Promise<DiffTape | undefined> {
  const tape = await readTape(deps, tenant, run, { maxSpans: options.maxSpans });
  if (!tape) return undefined;
  const summary = await getRun(deps.db, tenant, run);
  return {
    ...tape,
    first_start_ns: summary?.first_start_ns ?? null,
    last_end_ns: summary?.last_end_ns ?? null,
    // How a run ended cannot be read from its beginning.
    outcome: tape.truncated ? 'unknown' : summary?.outcome,
  };
}
