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
  const name = storableString(d.name);
  const model = nullable(d.model);
  const tool = nullable(d.tool);
  const params = storableValue<{ [key: string]: JsonValue }>(d.params);
  const toolCallId = d.toolCallId === undefined ? undefined : nullable(d.toolCallId);
  // Nearly every step has nothing to replace: no copy of it then.
  if (name === d.name && model === d.model && tool === d.tool && params === d.params && toolCallId === d.toolCallId)
    return d;
  const next: StepDraft = { ...d, name, model, tool, params };
  if (toolCallId !== undefined) next.toolCallId = toolCallId;
  return next;
}

function nullable(s: string | null): string | null {
  return s === null ? null : storableString(s);
}
