/**
 * @module normalize/dialects/types
 * A dialect reads one instrumentation family's span layout into a StepDraft. The registry
 * (dialects/index.ts) asks each dialect in order whether it `matches` a span and lets the
 * first that does `read` it, the way Langfuse's ObservationTypeMapper registry works: a new
 * vendor convention is a new file, not a longer function.
 */
import type { LogRecord, SpanRecord } from '../../spans/span-record.js';
import type { LayoutName, StepDraft, StepKind, StepStatus } from '../step.js';
import type { JsonValue } from '../../json/json-value.js';
import { NO_TOKENS } from '../usage.js';

export interface Dialect {
  readonly name: LayoutName;
  /** Cheap test on the span's own keys; decided per span, since one trace mixes families. */
  matches(span: SpanRecord, logs: readonly LogRecord[]): boolean;
  /** The step this span is, or null when it is context (a wrapper, HTTP, retrieval, embeddings). */
  read(span: SpanRecord, logs: readonly LogRecord[]): StepDraft | null;
}

export function spanStatus(span: SpanRecord): StepStatus {
  return span.status.code;
}

/** A draft with nothing recorded yet; dialects fill in what their layout carries. */
export function emptyDraft(span: SpanRecord, kind: StepKind, name: string, layout: LayoutName): StepDraft {
  return {
    kind,
    name,
    model: null,
    tool: null,
    status: spanStatus(span),
    request: null,
    response: null,
    tokens: { ...NO_TOKENS },
    params: {},
    layout,
    costUsd: null,
    toolCallId: null,
  };
}

/** undefined (not recorded) → null, the stored form of "not recorded". */
export function orNull(v: JsonValue | undefined): JsonValue | null {
  return v === undefined ? null : v;
}
