/**
 * Agent-framework spans the normalizer used to misread or lose, each built in the shape the
 * library's source writes (the file is named in each test).
 */
import { describe, expect, it } from 'vitest';
import { normalizeSpan as normalizeRecorded } from '../../../src/normalize/normalize.js';
import { comparableFacts } from '../../helpers/comparable-facts.js';
import type { LogRecord } from '../../../src/spans/span-record.js';
import type { StepDraft } from '../../../src/normalize/step.js';
import { log, span, type SpanInit } from '../../helpers/span-builder.js';

/** Read as digests read it (JSON-shaped text as JSON): the stored text is pinned in recorded-text.test.ts. */
const normalizeSpan = (...args: Parameters<typeof normalizeRecorded>) => comparableFacts(normalizeRecorded(...args));

const j = (v: unknown) => JSON.stringify(v);
const stepOf = (init: SpanInit) => normalizeSpan(span(init)).step as StepDraft;

describe('OpenAI Agents SDK handoffs and trace root (OpenInference, OpenLLMetry)', () => {
  const py = 'openinference.instrumentation.openai_agents';
  const js = '@arizeai/openinference-instrumentation-openai-agents';

  it('keeps an OpenInference handoff span (TOOL kind) as context, not a tool step', () => {
    // Python _processor.py _get_span_kind: HandoffSpanData → TOOL; _get_span_name: `handoff to {to_agent}`,
    // nothing but the kind and llm.system on it
    expect(
      normalizeSpan(
        span({
          name: 'handoff to Billing agent',
          parent: 'triage',
          scope: py,
          attributes: {
            'openinference.span.kind': 'TOOL',
            'llm.system': 'openai',
          },
        }),
      ).step,
    ).toBeNull();
    // JS processor.ts getHandoffAttributes: tool.name handoff_to_{to_agent}, input {from_agent}, output {to_agent}
    expect(
      normalizeSpan(
        span({
          name: 'handoff to Billing agent',
          parent: 'triage',
          scope: js,
          attributes: {
            'openinference.span.kind': 'TOOL',
            'llm.system': 'openai',
            'tool.name': 'handoff_to_Billing agent',
            'input.value': j({ from_agent: 'Triage agent' }),
            'input.mime_type': 'application/json',
            'output.value': j({ to_agent: 'Billing agent' }),
            'output.mime_type': 'application/json',
          },
        }),
      ).step,
    ).toBeNull();
    // a handoff whose target was not known yet is named after the span data type
    expect(
      normalizeSpan(
        span({ name: 'handoff', parent: 'triage', scope: py, attributes: { 'openinference.span.kind': 'TOOL' } }),
      ).step,
    ).toBeNull();
  });

  it('still reads a function tool of the openai-agents instrumentor as a tool step', () => {
    // _get_attributes_from_function_span_data: tool.name, input.value (JSON), output.value
    const step = stepOf({
      name: 'handoff',
      parent: 'agent',
      scope: py,
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'handoff',
        'input.value': j({ ticket: 7 }),
        'input.mime_type': 'application/json',
        'output.value': 'done',
      },
    });
    expect(step).toMatchObject({ kind: 'tool', tool: 'handoff', request: { ticket: 7 }, response: 'done' });
  });

  it('keeps the trace root (an AGENT span named after the Trace) as context, and reads the agent spans under it', () => {
    // on_trace_start / onTraceStart: span named trace.name, kind AGENT; JS adds the run's input and
    // output lifted from its LLM spans, Python 2.x the runner's input and on_agent_end output
    expect(
      normalizeSpan(span({ name: 'Agent workflow', scope: py, attributes: { 'openinference.span.kind': 'AGENT' } }))
        .step,
    ).toBeNull();
    expect(
      normalizeSpan(
        span({
          name: 'Agent workflow',
          parent: 'app',
          scope: js,
          attributes: {
            'openinference.span.kind': 'AGENT',
            'llm.system': 'openai',
            'input.value': j([{ role: 'user', content: 'Refund order 7' }]),
            'input.mime_type': 'application/json',
            'output.value': 'Refunded.',
          },
        }),
      ).step,
    ).toBeNull();
    expect(
      normalizeSpan(span({ name: 'Refund run', scope: py, attributes: { 'openinference.span.kind': 'AGENT' } })).step,
    ).toBeNull();
    // agent spans: named after the agent, under the root; graph.node.id (Python ≥ 1.1, JS) names it
    expect(
      stepOf({ name: 'Triage agent', parent: 'root', scope: py, attributes: { 'openinference.span.kind': 'AGENT' } }),
    ).toMatchObject({ kind: 'agent', name: 'Triage agent' });
    expect(
      stepOf({
        name: 'Billing agent',
        scope: js,
        attributes: {
          'openinference.span.kind': 'AGENT',
          'graph.node.id': 'Billing agent',
          'graph.node.parent_id': 'Triage agent',
          'output.value': 'Refunded.',
        },
      }),
    ).toMatchObject({ kind: 'agent', name: 'Billing agent', response: [{ role: 'assistant', content: 'Refunded.' }] });
  });

  it("keeps OpenLLMetry's handoff and Agent Workflow spans as context", () => {
    // opentelemetry-instrumentation-openai-agents _hooks.py _start_handoff_span / on_trace_start
    const scope = 'opentelemetry.instrumentation.openai_agents';
    expect(
      normalizeSpan(
        span({
          name: 'Triage agent → Billing agent.handoff',
          scope,
          attributes: {
            'traceloop.span.kind': 'handoff',
            'gen_ai.provider.name': 'openai',
            'gen_ai.operation.name': 'handoff',
            'gen_ai.handoff.from_agent': 'Triage agent',
            'gen_ai.handoff.to_agent': 'Billing agent',
            'gen_ai.agent.name': 'Triage agent',
          },
        }),
      ).step,
    ).toBeNull();
    expect(
      normalizeSpan(
        span({
          name: 'Agent Workflow',
          scope,
          attributes: {
            'traceloop.span.kind': 'workflow',
            'gen_ai.provider.name': 'openai',
            'traceloop.workflow.name': 'Agent Workflow',
          },
        }),
      ).step,
    ).toBeNull();
  });
});

describe('DSPy (openinference-instrumentation-dspy): LM outputs that are objects', () => {
  // __init__.py _LMCallWrapper: output.value = safe_json_dumps(LM.__call__'s return value), and
  // flattened output messages only for string outputs (_llm_output_messages); dspy/clients/base_lm.py
  // returns {text, reasoning_content?, tool_calls?, ...} objects once one answer carries more than text.
  const scope = 'openinference.instrumentation.dspy';
  const lm = (outputs: unknown) =>
    stepOf({
      name: 'LM.__call__',
      scope,
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o-mini',
        'llm.provider': 'openai',
        'input.mime_type': 'application/json',
        'input.value': j({ prompt: null, messages: [{ role: 'user', content: 'Weather in Paris?' }], kwargs: {} }),
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'Weather in Paris?',
        'output.value': j(outputs),
        'output.mime_type': 'application/json',
      },
    });

  it('reads a chat completion answer with tool calls (LiteLLM tool calls written as their str())', () => {
    const step = lm([
      {
        text: null,
        tool_calls: [
          "function=Function(arguments='{\"city\":\"Paris\"}', name='get_weather') id='call_1' type='function'",
        ],
      },
    ]);
    expect(step.request).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
    expect(step.response).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
    ]);
  });

  it('reads reasoning before the text, and Responses API function_call items by their call_id', () => {
    expect(lm([{ text: 'Sunny.', reasoning_content: 'Look it up.', logprobs: null }]).response).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Look it up.' },
          { type: 'text', text: 'Sunny.' },
        ],
      },
    ]);
    expect(
      lm([
        {
          tool_calls: [
            {
              arguments: '{"city":"Paris"}',
              call_id: 'call_9',
              name: 'get_weather',
              type: 'function_call',
              id: 'fc_1',
              status: 'completed',
            },
          ],
          text: '',
        },
      ]).response,
    ).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_9', name: 'get_weather', arguments: { city: 'Paris' } }] },
    ]);
  });
});

describe('AutoGen (autogen-core _telemetry/_genai.py trace_tool_span)', () => {
  it("reads autogen.tool.arguments as the tool step's arguments", () => {
    // trace_tool_span(tool_name, tool_description, tool_call_id, tool_arguments): execute_tool span
    // with gen_ai.system=autogen and, where given, autogen.tool.arguments (a string)
    const step = stepOf({
      name: 'execute_tool get_weather',
      scope: 'autogen-core',
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.system': 'autogen',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.id': 'call_1',
        'autogen.tool.arguments': '{"city": "Paris"}',
      },
    });
    expect(step).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: null,
    });
  });
});

describe('OTel contrib vertexai (instrumentation-genai utils.py), event mode: call ids in the history', () => {
  // request_to_events: a model turn goes out as gen_ai.assistant.message with its parts (no ids), a
  // function response as gen_ai.tool.message with id `{name}_{index}`; response_to_events makes up
  // `{name}_{part index}` for the choice's calls. The span says gen_ai.system=vertex_ai.
  const event = (name: string, body: LogRecord['body']): LogRecord => ({
    ...log('vx2', name, body),
    eventName: name,
    attributes: { 'gen_ai.system': 'vertex_ai' },
  });
  const chat = span({
    name: 'chat gemini-2.0-flash',
    id: 'vx2',
    kind: 'client',
    scope: 'opentelemetry.instrumentation.vertexai',
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.system': 'vertex_ai',
      'gen_ai.request.model': 'gemini-2.0-flash',
    },
  });

  it("gives the history's calls the ids the instrumentation gave them, so they pair with the tool results", () => {
    const step = normalizeSpan(chat, [
      event('gen_ai.user.message', { role: 'user', content: [{ text: 'Weather and time in Boston?' }] }),
      event('gen_ai.assistant.message', {
        role: 'model',
        content: [
          { function_call: { name: 'get_weather', args: { location: 'Boston' } } },
          { function_call: { name: 'get_time', args: {} } },
        ],
      }),
      event('gen_ai.tool.message', { role: 'user', id: 'get_weather_0', content: { result: 'rainy' } }),
      event('gen_ai.tool.message', { role: 'user', id: 'get_time_1', content: { result: '12:00' } }),
      event('gen_ai.choice', {
        finish_reason: 'stop',
        index: 0,
        message: { role: 'model', content: [{ text: 'Rainy, noon.' }] },
      }),
    ]).step as StepDraft;
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather and time in Boston?' },
      {
        role: 'assistant',
        tool_calls: [
          { id: 'get_weather_0', name: 'get_weather', arguments: { location: 'Boston' } },
          { id: 'get_time_1', name: 'get_time', arguments: {} },
        ],
      },
      { role: 'tool', tool_call_id: 'get_weather_0', content: { result: 'rainy' } },
      { role: 'tool', tool_call_id: 'get_time_1', content: { result: '12:00' } },
    ]);
  });

  it('gives no id to calls after a text part, where the results are numbered differently (among responses, not all parts)', () => {
    const step = normalizeSpan(chat, [
      event('gen_ai.user.message', { role: 'user', content: [{ text: 'Weather in Boston and Paris?' }] }),
      event('gen_ai.assistant.message', {
        role: 'model',
        content: [
          { text: 'Looking both up.' },
          { function_call: { name: 'get_weather', args: { location: 'Boston' } } },
          { function_call: { name: 'get_weather', args: { location: 'Paris' } } },
        ],
      }),
      event('gen_ai.tool.message', { role: 'user', id: 'get_weather_0', content: { result: 'rainy' } }),
      event('gen_ai.tool.message', { role: 'user', id: 'get_weather_1', content: { result: 'sunny' } }),
      event('gen_ai.choice', {
        finish_reason: 'stop',
        index: 0,
        message: { role: 'model', content: [{ text: 'Rainy, sunny.' }] },
      }),
    ]).step as StepDraft;
    const calls = (step.request as { tool_calls?: { id?: string }[] }[])[1].tool_calls!;
    expect(calls.map((c) => c.id)).toEqual([undefined, undefined]);
  });
});
