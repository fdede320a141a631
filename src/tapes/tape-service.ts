/**
 * @module tapes/tape-service
 * Tapes: stored rows → assembled, numbered steps → optionally with payload references
 * resolved within --tape-max-bytes. What GET /v1/tapes/{run}, replay, diff, recall,
 * reconstruct and the dataset export all read.
 */
import type { Queryable } from '../store/database.js';
import type { Tape } from '../normalize/step.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import { createPayloadResolver } from '../payloads/resolve-payloads.js';
import { assembleTape } from './assemble-run.js';
import { DEFAULT_MAX_TAPE_SPANS, readRunsRows } from './tape-reader.js';

export interface TapeDeps {
  db: Queryable;
  payloads: PayloadStore;
}

export interface ReadTapeOptions {
  maxSpans?: number;
  /** inline payload references, up to maxResolveBytes of payload content per tape */
  resolve?: boolean;
  maxResolveBytes?: number;
  signal?: AbortSignal;
  /** 'outline': steps without their prompts and answers, for summaries (tape-reader.ts) */
  bodies?: 'stored' | 'outline';
}

const DEFAULT_MAX_RESOLVE_BYTES = 8 * 1024 * 1024;

/** Tapes of the runs that exist, by run id (two statements however many runs, one in outline). */
export async function readTapes(
  deps: TapeDeps,
  tenant: string,
  runs: readonly string[],
  options: ReadTapeOptions = {},
): Promise<Map<string, Tape>> {
  const rowsByRun = await readRunsRows(deps.db, tenant, runs, {
    maxSpans: options.maxSpans ?? DEFAULT_MAX_TAPE_SPANS,
    signal: options.signal,
    bodies: options.bodies,
  });
  const out = new Map<string, Tape>();
  for (const run of runs) {
    const rows = rowsByRun.get(run);
    if (!rows || out.has(run)) continue;
    const tape: Tape = {
      run,
      tenant: rows.tenant,
      spans_examined: rows.spansExamined,
      truncated: rows.truncated,
      steps: assembleTape(rows),
    };
    out.set(run, options.resolve ? await resolveTape(deps, tape, options) : tape);
  }
  return out;
}

export async function readTape(
  deps: TapeDeps,
  tenant: string,
  run: string,
  options: ReadTapeOptions = {},
): Promise<Tape | undefined> {
  return (await readTapes(deps, tenant, [run], options)).get(run);
}

/** The tape with payload references inlined within maxResolveBytes, one budget per tape. */
export async function resolveTape(
  deps: TapeDeps,
  tape: Tape,
  options: Pick<ReadTapeOptions, 'maxResolveBytes' | 'signal'> = {},
): Promise<Tape> {
  options.signal?.throwIfAborted();
  const resolver = createPayloadResolver(deps.payloads, {
    maxBytes: options.maxResolveBytes ?? DEFAULT_MAX_RESOLVE_BYTES,
    signal: options.signal,
  });
  for (const step of tape.steps) {
    step.request = await resolver.resolve(step.request);
    step.response = await resolver.resolve(step.response);
  }
  tape.resolved_partial = resolver.resolvedPartial;
  return tape;
}
