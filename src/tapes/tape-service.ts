/**
 * @module tapes/tape-service
 * A run's tape: stored rows → assembled, numbered steps → optionally with payload
 * references resolved within --tape-max-bytes. What GET /v1/tapes/{run}, replay, diff and
 * reconstruct all read.
 */
import type { Queryable } from '../store/database.js';
import type { Tape } from '../normalize/step.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import { createPayloadResolver } from '../payloads/resolve-payloads.js';
import { assembleTape } from './assemble-run.js';
import { DEFAULT_MAX_TAPE_SPANS, readRunRows } from './tape-reader.js';

export interface TapeDeps {
  db: Queryable;
  payloads: PayloadStore;
}

export interface ReadTapeOptions {
  maxSpans?: number;
  /** inline payload references, up to maxResolveBytes of payload content */
  resolve?: boolean;
  maxResolveBytes?: number;
  signal?: AbortSignal;
}

export async function readTape(deps: TapeDeps, tenant: string, run: string, options: ReadTapeOptions = {}): Promise<Tape | undefined> {
  const rows = await readRunRows(deps.db, tenant, run, { maxSpans: options.maxSpans ?? DEFAULT_MAX_TAPE_SPANS });
  if (!rows) return undefined;
  const steps = assembleTape(rows);
  const tape: Tape = { run, tenant: rows.tenant, spans_examined: rows.spansExamined, truncated: rows.truncated, steps };
  if (!options.resolve) return tape;
  const resolver = createPayloadResolver(deps.payloads, { maxBytes: options.maxResolveBytes ?? 8 * 1024 * 1024, signal: options.signal });
  for (const step of steps) {
    step.request = await resolver.resolve(step.request);
    step.response = await resolver.resolve(step.response);
  }
  tape.resolved_partial = resolver.resolvedPartial;
  return tape;
}
