/**
 * @module tapes/assemble-run
 * Adapts the rows the reader returns to the pure assembler.
 */
import type { Step } from '../normalize/step.js';
import type { RunRows } from './tape-reader.js';

export function assembleTape(rows: RunRows): Step[] {
  // Placeholder order until the causality-aware assembler lands: start, end, span id.
  const sorted = [...rows.steps].sort((a, b) =>
    a.start_ns !== b.start_ns ? (a.start_ns < b.start_ns ? -1 : 1) : a.span_id < b.span_id ? -1 : a.span_id > b.span_id ? 1 : 0,
  );
  return sorted.map((s, index) => ({ index, ...s }));
}
