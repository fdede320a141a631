/**
 * @module derive/storable-facts
 * A span's strings are made storable before it is derived (spans/storable-text.ts), but
 * JSON text inside an attribute (gen_ai.input.messages, say) may spell NUL or a lone
 * surrogate as an escape, which parsing turns into the character again. The step's text and
 * jsonb columns (name, model, tool, tool call id, params) get the same replacement; its
 * request and response are stored as JSON text, escapes and all, so they keep the recorded
 * text exactly and only the views' jsonb form shows U+FFFD.
 */
import type { SpanFacts, StepDraft } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { storableString, storableValue } from '../spans/storable-text.js';

export function storableFacts(facts: SpanFacts): SpanFacts {
  const ownRun = nullable(facts.ownRun);
  const parentRun = nullable(facts.parentRun);
  const step = facts.step && storableStep(facts.step);
  return ownRun === facts.ownRun && parentRun === facts.parentRun && step === facts.step
    ? facts
    : { ownRun, parentRun, step };
}

function storableStep(d: StepDraft): StepDraft {
  const next: StepDraft = {
    ...d,
    name: storableString(d.name),
    model: nullable(d.model),
    tool: nullable(d.tool),
    params: storableValue<{ [key: string]: JsonValue }>(d.params),
  };
  if (d.toolCallId !== undefined) next.toolCallId = nullable(d.toolCallId);
  const same =
    next.name === d.name &&
    next.model === d.model &&
    next.tool === d.tool &&
    next.params === d.params &&
    next.toolCallId === d.toolCallId;
  return same ? d : next;
}

function nullable(s: string | null): string | null {
  return s === null ? null : storableString(s);
}
