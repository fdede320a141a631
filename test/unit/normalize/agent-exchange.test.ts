/**
 * Agent steps have one canonical request and response whichever layout recorded them
 * (src/normalize/agent-exchange.ts): the request is the turns the agent was invoked with, its
 * system instructions and any earlier turns are configuration outside the request digest, and
 * its answer is assistant messages. Spans built in each layout's shape (OTel GenAI semantic
 * conventions' invoke_agent attributes, OpenInference AGENT spans, Traceloop's withAgent
 * entity input and output); the corpus comparison is in layout-independence.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { normalizeSpan } from '../../../src/normalize/normalize.js';
import { finishStep } from '../../../src/normalize/finish.js';
import type { StepDraft } from '../../../src/normalize/step.js';
import { span, type SpanInit } from '../../helpers/span-builder.js';

const j = (v: unknown) => JSON.stringify(v);
const stepOf = (init: SpanInit) => normalizeSpan(span(init)).step as StepDraft;
const finished = (init: SpanInit) => finishStep(stepOf(init));

const genAiAgent = (attributes: SpanInit['attributes']) => ({
  name: 'invoke_agent planner',
  attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner', ...attributes },
});
const user = (text: string) => ({ role: 'user', parts: [{ type: 'text', content: text }] });
const assistant = (text: string) => ({ role: 'assistant', parts: [{ type: 'text', content: text }] });

describe('agent steps: one canonical invocation', () => {
  it('keeps instructions and earlier turns as configuration, outside the request digest', () => {
    const bare = finished(genAiAgent({ 'gen_ai.input.messages': j([user('Plan a trip to Lyon')]) }));
    const withAll = finished(
      genAiAgent({
        'gen_ai.system_instructions': j([{ type: 'text', content: 'You plan trips.' }]),
        'gen_ai.input.messages': j([user('Hello'), assistant('Hi, where to?'), user('Plan a trip to Lyon')]),
      }),
    );
    expect(withAll.request).toEqual([{ role: 'user', content: 'Plan a trip to Lyon' }]);
    expect(withAll.params.instructions).toEqual([{ role: 'system', content: 'You plan trips.' }]);
    expect(withAll.params.history).toEqual([
      { role: 'user', content: 'Hello' },
      { role: 'assistant', content: 'Hi, where to?' },
    ]);
    expect(withAll.request_digest).toBe(bare.request_digest);
    expect(withAll.fingerprint).toBe(bare.fingerprint);
    expect(bare.params.instructions).toBeUndefined();
    // a different question is a different invocation
    const other = finished(genAiAgent({ 'gen_ai.input.messages': j([user('Plan a trip to Nice')]) }));
    expect(other.request_digest).not.toBe(bare.request_digest);
  });

  it('keeps a user turn split in two as the request, both parts', () => {
    const step = stepOf(
      genAiAgent({ 'gen_ai.input.messages': j([assistant('Where to?'), user('Lyon.'), user('By train.')]) }),
    );
    expect(step.request).toEqual([
      { role: 'user', content: 'Lyon.' },
      { role: 'user', content: 'By train.' },
    ]);
    expect(step.params.history).toEqual([{ role: 'assistant', content: 'Where to?' }]);
  });

  it('digests the same invocation equally in OTel GenAI, OpenInference and OpenLLMetry', () => {
    const question = 'Plan a trip to Lyon';
    const answer = 'Take the 9:00 train.';
    const genAi = finished(
      genAiAgent({
        'gen_ai.system_instructions': j([{ type: 'text', content: 'You plan trips.' }]),
        'gen_ai.input.messages': j([user(question)]),
        'gen_ai.output.messages': j([{ ...assistant(answer), finish_reason: 'stop' }]),
      }),
    );
    const openInference = finished({
      name: 'planner',
      attributes: {
        'openinference.span.kind': 'AGENT',
        'input.value': question,
        'input.mime_type': 'text/plain',
        'output.value': answer,
        'output.mime_type': 'text/plain',
      },
    });
    // @traceloop/node-server-sdk withAgent: the wrapped function's arguments and its return value
    const openLlmetry = finished({
      name: 'planner.agent',
      attributes: {
        'traceloop.span.kind': 'agent',
        'traceloop.entity.name': 'planner',
        'traceloop.entity.input': j({ args: [question], kwargs: {} }),
        'traceloop.entity.output': j(answer),
      },
    });
    for (const step of [openInference, openLlmetry]) {
      expect(step.request).toEqual([{ role: 'user', content: question }]);
      expect(step.response).toEqual([{ role: 'assistant', content: answer }]);
      expect([step.request_digest, step.response_digest, step.fingerprint]).toEqual([
        genAi.request_digest,
        genAi.response_digest,
        genAi.fingerprint,
      ]);
    }
  });

  it('reads an agent invoked with no arguments as input not recorded', () => {
    const step = finished({
      name: 'planner.agent',
      attributes: {
        'traceloop.span.kind': 'agent',
        'traceloop.entity.name': 'planner',
        'traceloop.entity.input': j({ args: [], kwargs: {} }),
        'traceloop.entity.output': j('Done.'),
      },
    });
    expect([step.request, step.request_digest, step.fingerprint]).toEqual([null, null, 'agent:planner#']);
    expect(step.response).toEqual([{ role: 'assistant', content: 'Done.' }]);
  });

  it('keeps a structured input that is not messages as recorded', () => {
    const step = stepOf({
      name: 'planner.agent',
      attributes: {
        'traceloop.span.kind': 'agent',
        'traceloop.entity.name': 'planner',
        'traceloop.entity.input': j({ args: [], kwargs: { city: 'Lyon', days: 2 } }),
      },
    });
    expect(step.request).toEqual({ city: 'Lyon', days: 2 });
  });
});
