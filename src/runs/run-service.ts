/**
 * @module runs/run-service
 * Reconstructing a stored run: its facts (parent run, outcome; run-pages.ts), its tape with
 * payload references inlined within the budget (tapes/tape-service.ts), then reconstruct (pure). What
 * `GET /v1/runs/{run}/reconstruct`, `tapedeck reconstruct` and every tree node read.
 */
import type { TapeDeps } from '../tapes/tape-service.js';
import { readRunFacts, type RunFacts } from './run-pages.js';
import { readTapes } from '../tapes/tape-service.js';
import { reconstructRun, type ReconstructedRun } from './reconstruct.js';

export interface ReconstructOptions {
  /** payload bytes inlined for the run; default 8 MiB (--tape-max-bytes) */
  maxResolveBytes?: number;
  signal?: AbortSignal;
  /** the run's facts when the caller already read them */
  facts?: RunFacts;
}

/** The reconstructed run, or undefined when the tenant has no such run. */
export async function reconstructStoredRun(
  deps: TapeDeps,
  tenant: string,
  run: string,
  options: ReconstructOptions = {},
): Promise<ReconstructedRun | undefined> {
  const facts = options.facts ?? (await readRunFacts(deps.db, tenant, [run], { signal: options.signal })).get(run);
  if (!facts) return undefined;
  options.signal?.throwIfAborted();
  const tape = (
    await readTapes(deps, tenant, [run], {
      resolve: true,
      maxResolveBytes: options.maxResolveBytes,
      signal: options.signal,
    })
  ).get(run);
  if (!tape) return undefined;
  return reconstructRun(tape, facts);
}
