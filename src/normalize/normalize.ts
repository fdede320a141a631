/**
 * @module normalize/normalize
 * normalizeSpan: one SpanRecord (and the log records correlated to it) in, SpanFacts out —
 * the run the span names, and the step it is (or null when it is context). Pure: no I/O,
 * clock or environment. Digests come later (finish.ts; payloads/offload.ts when a value is
 * offloaded), of the values as normalized here.
 *
 * Log records may arrive in a later export than their span (the OTel logs and traces
 * pipelines are separate): a span normalized before its logs arrived reads as content not
 * recorded, and normalizing it again with its logs gives the full step.
 */
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import type { SpanFacts, StepDraft } from './step.js';
import { DIALECTS, type Dialect } from './dialects/index.js';
import { ownRunOf, parentRunOf } from './run-identity.js';
import { optionsFromAttributes, optionsFromBody, withRequestOptions } from './request-options.js';
import { jsonAttr } from './attrs.js';
import { canonicalAgentStep } from './agent-exchange.js';

/**
 * A model step's request options (tools, tool_choice, response_format), read here for every
 * layout from the attributes that record them, in canonical shape among its params.
 */
const OPTION_IN_TEXT = /"(tools|tool_choice|response_format|functions|function_call)"/;

function withOptions(span: SpanRecord, step: StepDraft | null): StepDraft | null {
  if (step?.kind !== 'llm') return step;
  const attrs = span.attributes;
  // A request body is parsed again only when it can hold an option (prompts can be large).
  const text = attrs['input.value'];
  const body = typeof text === 'string' && OPTION_IN_TEXT.test(text) ? jsonAttr(text) : undefined;
  step.params = withRequestOptions(
    step.params,
    optionsFromAttributes(attrs),
    optionsFromBody(jsonAttr(attrs['llm.invocation_parameters'])),
    optionsFromBody(body),
  );
  return step;
}

/**
 * Bumped whenever the same span would normalize differently (new dialect rules, a changed
 * canonical shape), so stored steps can be recognized as stale and reindexed from spans.
 * What each version changed: CHANGELOG.md, "Normalizer versions".
 */
export const NORMALIZER_VERSION = 12;

const NO_LOGS: readonly LogRecord[] = Object.freeze([]);

/** A dialect threw on a span (kept with no step); `layout` names the dialect. */
export type DialectErrorHandler = (error: unknown, layout: string) => void;

export function normalizeSpan(
  span: SpanRecord,
  logs: readonly LogRecord[] = NO_LOGS,
  dialects: readonly Dialect[] = DIALECTS,
  onDialectError?: DialectErrorHandler,
): SpanFacts {
  return { ...runFactsOf(span), step: stepOf(span, logs, dialects, onDialectError) };
}

/**
 * What the span itself says about its run: the run it names and an explicitly named parent
 * run. Read from its attributes alone, so a writer can have them without the span's step.
 */
export function runFactsOf(span: SpanRecord): Pick<SpanFacts, 'ownRun' | 'parentRun'> {
  return { ownRun: ownRunOf(span.attributes), parentRun: parentRunOf(span.attributes) };
}

/**
 * The first matching dialect's step. Dialects read untrusted attribute values; should one
 * still throw on a shape nobody foresaw, the span is kept as a span with no step (like a span
 * no dialect understands) rather than failing the whole export it arrived in.
 */
function stepOf(
  span: SpanRecord,
  logs: readonly LogRecord[],
  dialects: readonly Dialect[],
  onDialectError?: DialectErrorHandler,
): StepDraft | null {
  let dialect: Dialect | undefined;
  try {
    for (dialect of dialects) {
      if (dialect.matches(span, logs)) return withOptions(span, canonicalAgentStep(dialect.read(span, logs)));
    }
  } catch (error) {
    // Said, not swallowed: the step is missing until a fixed normalizer's reindex derives it.
    onDialectError?.(error, dialect?.name ?? 'unknown');
    return null;
  }
  return null;
}
