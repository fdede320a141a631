/**
 * Span facts with the step's request and response in comparable form (src/normalize/comparable.ts):
 * JSON-shaped text read as the JSON it spells, as digests read it. For tests about what a layout
 * is read as (which messages, calls and results), whether it recorded a value as text or as
 * structure aside; test/unit/normalize/recorded-text.test.ts pins that the text is kept.
 */
import { comparableForm } from '../../src/normalize/comparable.js';
import type { SpanFacts } from '../../src/normalize/step.js';

export function comparableFacts(facts: SpanFacts): SpanFacts {
  const step = facts.step;
  if (!step) return facts;
  return {
    ...facts,
    step: {
      ...step,
      request: step.request === null ? null : comparableForm(step.request),
      response: step.response === null ? null : comparableForm(step.response),
    },
  };
}
