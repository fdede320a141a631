/**
 * @module tapes/assemble-run
 * The reader's rows → the ordered, numbered steps of a tape (assemble.ts, pure).
 * A tool step's tool_call_id is used for ordering and then left off the served tape unless
 * recorded, so a tape carries no key that says nothing.
 */
import type { Step } from '../normalize/step.js';
import { assembleTape as assemble } from './assemble.js';
import type { RunRows } from './tape-reader.js';

export function assembleTape(rows: RunRows): Step[] {
  return assemble({ steps: rows.steps, spans: rows.spans }).map((step) => {
    if (step.tool_call_id === null || step.tool_call_id === undefined) {
      const { tool_call_id: _unused, ...rest } = step;
      return rest;
    }
    return step;
  });
}
