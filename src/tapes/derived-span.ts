/**
 * @module tapes/derived-span
 * What the tapes layer takes from derivation (src/derive/): a span's run facts and, when it
 * is a step, the stored step. Declared here, where it is written, so derivation depends on
 * the tapes layer and never the other way round.
 */
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import type { StoredStep } from './step-rows.js';

/** What deriving a span produced: its run facts and, when it is a step, the stored step. */
export interface DerivedSpan {
  ownRun: string | null;
  ownParentRun: string | null;
  step: StoredStep | null;
}

/** Normalizes, offloads and digests spans; `logsOf` gives the log records correlated to a span. */
export type DeriveSpans = (
  spans: readonly SpanRecord[],
  logsOf: (span: SpanRecord) => LogRecord[],
) => Promise<DerivedSpan[]>;
