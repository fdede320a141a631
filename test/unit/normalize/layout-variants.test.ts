/**
 * Layout variants the reference (shared/reference/genai-layouts.md) or the instrumentation
 * libraries' documented conventions allow, beyond the shapes the corpus captured: one test per
 * variant, each hand-written in the layout's documented key names and value shapes, showing the
 * canonical step it must become. Also robustness: wrongly typed or malformed attributes never
 * throw, and a span no dialect understands stays a span (no step), never an error.
 */
import { describe, expect, it } from 'vitest';
import { normalizeSpan as normalizeRecorded } from '../../../src/normalize/normalize.js';
import { comparableFacts } from '../../helpers/comparable-facts.js';
import { finishStep } from '../../../src/normalize/finish.js';
import type { Attributes, LogRecord } from '../../../src/spans/span-record.js';
import type { StepDraft } from '../../../src/normalize/step.js';
import { log, span, type SpanInit } from '../../helpers/span-builder.js';

/** Read as digests read it (JSON-shaped text as JSON): the stored text is pinned in recorded-text.test.ts. */
const normalizeSpan = (...args: Parameters<typeof normalizeRecorded>) => comparableFacts(normalizeRecorded(...args));

const j = (v: unknown) => JSON.stringify(v);
const stepOf = (init: SpanInit, logs: LogRecord[] = []) => normalizeSpan(span(init), logs).step as StepDraft;
const chat = (attributes: Attributes) =>
  stepOf({ name: 'chat gpt-4o', kind: 'client', attributes: { 'gen_ai.operation.name': 'chat', ...attributes } });
const text = (content: string) => ({ type: 'text', content });

describe('OTel GenAI (v1.37+) variants', () => {
  it.each([
    ['chat', 'llm'],
    ['text_completion', 'llm'],
    ['generate_content', 'llm'],
    ['execute_tool', 'tool'],
    ['invoke_agent', 'agent'],
    ['embeddings', null],
    ['create_agent', null],
    ['invoke_workflow', null],
    ['retrieval', null],
    ['rerank', null],
    ['search_memory', null],
  ])('operation %s is a %s step', (op, kind) => {
    const step = normalizeSpan(
      span({ name: `${op} x`, attributes: { 'gen_ai.operation.name': op, 'gen_ai.request.model': 'm' } }),
    ).step;
    expect(step?.kind ?? null).toBe(kind);
  });

  it('reads a Gemini generate_content answer (role "model") as the assistant', () => {
    const step = stepOf({
      name: 'generate_content gemini-2.5-flash',
      attributes: {
        'gen_ai.operation.name': 'generate_content',
        'gen_ai.provider.name': 'gcp.gemini',
        'gen_ai.output.messages': j([{ role: 'model', parts: [text('Hi')], finish_reason: 'stop' }]),
      },
    });
    expect(step.response).toEqual([{ role: 'assistant', content: 'Hi', finish_reason: 'stop' }]);
  });

  it('reads structured (kvlist/array) system instructions, input and output like their JSON strings', () => {
    const structured = chat({
      'gen_ai.system_instructions': [text('Be brief.')],
      'gen_ai.input.messages': [{ role: 'user', parts: [text('Hi')] }],
      'gen_ai.output.messages': [{ role: 'assistant', parts: [text('Yo')], finish_reason: 'stop' }],
    });
    const strings = chat({
      'gen_ai.system_instructions': j([text('Be brief.')]),
      'gen_ai.input.messages': j([{ role: 'user', parts: [text('Hi')] }]),
      'gen_ai.output.messages': j([{ role: 'assistant', parts: [text('Yo')], finish_reason: 'stop' }]),
    });
    expect(structured.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect([structured.request, structured.response]).toEqual([strings.request, strings.response]);
  });

  it('keeps a raw system-instructions string as text even when it parses as a JSON scalar', () => {
    // @opentelemetry/instrumentation-openai's Responses spans put `instructions` there raw.
    expect(chat({ 'gen_ai.system_instructions': '42' }).request).toEqual([{ role: 'system', content: '42' }]);
    expect(chat({ 'gen_ai.system_instructions': 'Be brief.' }).request).toEqual([
      { role: 'system', content: 'Be brief.' },
    ]);
  });

  it('reads an output message without a role as the assistant answer, not a user turn', () => {
    const step = chat({ 'gen_ai.output.messages': j([{ parts: [text('Hi')], finish_reason: 'stop' }]) });
    expect(step.response).toEqual([{ role: 'assistant', content: 'Hi', finish_reason: 'stop' }]);
    const agent = stepOf({
      name: 'invoke_agent a',
      attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.output.messages': j([{ parts: [text('Done')] }]) },
    });
    expect(agent.response).toEqual([{ role: 'assistant', content: 'Done' }]);
    // an input message without a role is still a user turn
    expect(chat({ 'gen_ai.input.messages': j([{ parts: [text('Hi')] }]) }).request).toEqual([
      { role: 'user', content: 'Hi' },
    ]);
  });

  it("takes gen_ai.response.finish_reasons given as a single string as the one choice's", () => {
    const step = chat({
      'gen_ai.output.messages': j([{ role: 'assistant', parts: [text('Hi')] }]),
      'gen_ai.response.finish_reasons': 'stop',
    });
    expect(step.response).toEqual([{ role: 'assistant', content: 'Hi', finish_reason: 'stop' }]);
  });

  it("reads tool_call / tool_call_response parts (response or the registry example's result)", () => {
    const step = chat({
      'gen_ai.input.messages': j([
        { role: 'user', parts: [text('Weather?')] },
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
        },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_1', response: { temp_c: 14 } }] },
        { role: 'tool', parts: [{ type: 'tool_call_response', id: 'call_2', result: 'sunny' }] },
      ]),
      'gen_ai.output.messages': j([
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'call_3', name: 'get_time', arguments: '{"tz":"CET"}' }],
          finish_reason: 'tool_call',
        },
      ]),
    });
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: { temp_c: 14 } },
      { role: 'tool', tool_call_id: 'call_2', content: 'sunny' },
    ]);
    expect(step.response).toEqual([
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_3', name: 'get_time', arguments: { tz: 'CET' } }],
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('keeps blob, uri, file, reasoning, server tool and unknown parts as content parts', () => {
    const step = chat({
      'gen_ai.input.messages': j([
        {
          role: 'user',
          parts: [
            text('Look:'),
            { type: 'blob', modality: 'image', mime_type: 'image/png', content: 'iVBORw0KGgo=' },
            { type: 'uri', modality: 'video', uri: 'https://x/v.mp4' },
            { type: 'file', modality: 'document', file_id: 'file-1' },
          ],
        },
      ]),
      'gen_ai.output.messages': j([
        {
          role: 'assistant',
          finish_reason: 'stop',
          parts: [
            { type: 'reasoning', content: 'Thinking.' },
            {
              type: 'server_tool_call',
              id: 'srv_1',
              name: 'web_search',
              server_tool_call: { type: 'web_search', query: 'x' },
            },
            { type: 'refusal', content: 'No.' },
            { type: 'compaction', id: 'cmp_1' },
          ],
        },
      ]),
    });
    expect(step.request).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look:' },
          { type: 'image', mime_type: 'image/png', data: 'iVBORw0KGgo=' },
          { type: 'video', url: 'https://x/v.mp4' },
          { type: 'document', file_id: 'file-1' },
        ],
      },
    ]);
    expect(step.response).toEqual([
      {
        role: 'assistant',
        finish_reason: 'stop',
        content: [
          { type: 'reasoning', text: 'Thinking.' },
          {
            type: 'server_tool_call',
            id: 'srv_1',
            name: 'web_search',
            server_tool_call: { type: 'web_search', query: 'x' },
          },
          { type: 'refusal', text: 'No.' },
          { type: 'compaction', id: 'cmp_1' },
        ],
      },
    ]);
  });

  it('reads execute_tool arguments and result given structured or as JSON strings', () => {
    const base = {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'get_weather',
      'gen_ai.tool.call.id': 'call_1',
    };
    const structured = stepOf({
      name: 'execute_tool get_weather',
      attributes: {
        ...base,
        'gen_ai.tool.call.arguments': { city: 'Paris' },
        'gen_ai.tool.call.result': { temp_c: 14 },
      },
    });
    const strings = stepOf({
      name: 'execute_tool get_weather',
      attributes: {
        ...base,
        'gen_ai.tool.call.arguments': '{"city":"Paris"}',
        'gen_ai.tool.call.result': '{"temp_c":14}',
      },
    });
    expect(structured).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: { temp_c: 14 },
    });
    expect([strings.request, strings.response]).toEqual([structured.request, structured.response]);
  });

  it('reads an execute_tool span that lacks gen_ai.operation.name by its tool-call keys and span name', () => {
    const step = stepOf({
      name: 'execute_tool get_weather',
      attributes: { 'gen_ai.tool.call.id': 'call_1', 'gen_ai.tool.call.arguments': '{"city":"Paris"}' },
    });
    expect(step).toMatchObject({ kind: 'tool', tool: 'get_weather', toolCallId: 'call_1', request: { city: 'Paris' } });
  });

  it('reads the operation from the span name when gen_ai.operation.name is missing', () => {
    expect(
      normalizeSpan(
        span({
          name: 'embeddings text-embedding-3-small',
          attributes: { 'gen_ai.request.model': 'text-embedding-3-small' },
        }),
      ).step,
    ).toBeNull();
    expect(
      normalizeSpan(span({ name: 'chat gpt-4o', attributes: { 'gen_ai.request.model': 'gpt-4o' } })).step?.kind,
    ).toBe('llm');
  });
});

describe('OTel GenAI older event layouts', () => {
  it('reads ≤ v1.27 span events gen_ai.content.prompt / gen_ai.content.completion', () => {
    const step = stepOf({
      name: 'chat gpt-4o',
      attributes: { 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o' },
      events: [
        { name: 'gen_ai.content.prompt', attributes: { 'gen_ai.prompt': j([{ role: 'user', content: 'Hi' }]) } },
        {
          name: 'gen_ai.content.completion',
          attributes: { 'gen_ai.completion': j([{ role: 'assistant', content: 'Yo', finish_reason: 'stop' }]) },
        },
      ],
    });
    expect(step).toMatchObject({
      kind: 'llm',
      layout: 'otel-genai-events',
      request: [{ role: 'user', content: 'Hi' }],
      response: [{ role: 'assistant', content: 'Yo', finish_reason: 'stop' }],
    });
  });

  it('reads ≤ v1.27 gen_ai.prompt / gen_ai.completion given as plain text or as one message object', () => {
    const plain = stepOf({
      name: 'chat gpt-4o',
      attributes: { 'gen_ai.system': 'openai', 'gen_ai.request.model': 'gpt-4o' },
      events: [
        { name: 'gen_ai.content.prompt', attributes: { 'gen_ai.prompt': 'Tell me a joke' } },
        { name: 'gen_ai.content.completion', attributes: { 'gen_ai.completion': 'No.' } },
      ],
    });
    expect([plain.request, plain.response]).toEqual([
      [{ role: 'user', content: 'Tell me a joke' }],
      [{ role: 'assistant', content: 'No.' }],
    ]);
    const single = stepOf({
      name: 'chat gpt-4o',
      attributes: { 'gen_ai.request.model': 'gpt-4o' },
      events: [
        {
          name: 'gen_ai.content.completion',
          attributes: { 'gen_ai.completion': j({ role: 'assistant', content: 'No.', finish_reason: 'stop' }) },
        },
      ],
    });
    expect(single.response).toEqual([{ role: 'assistant', content: 'No.', finish_reason: 'stop' }]);
  });

  it('reads per-message events sent as span events, their message and tool_calls JSON-encoded in attributes', () => {
    const step = stepOf({
      name: 'chat gpt-4o',
      attributes: { 'gen_ai.operation.name': 'chat' },
      events: [
        { name: 'gen_ai.user.message', attributes: { 'gen_ai.system': 'openai', content: 'Weather?' } },
        {
          name: 'gen_ai.assistant.message',
          attributes: {
            'gen_ai.system': 'openai',
            tool_calls: j([{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }]),
          },
        },
        { name: 'gen_ai.tool.message', attributes: { 'gen_ai.system': 'openai', id: 'call_1', content: '{"t":14}' } },
        {
          name: 'gen_ai.choice',
          attributes: { 'gen_ai.system': 'openai', index: 0, finish_reason: 'stop', message: j({ content: 'Rainy.' }) },
        },
      ],
    });
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'w', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: { t: 14 } },
    ]);
    expect(step.response).toEqual([{ role: 'assistant', content: 'Rainy.', finish_reason: 'stop' }]);
  });

  it('reads log records named in the LogRecord event_name field, with roles and parts-list content', () => {
    const named = (name: string, body: LogRecord['body']): LogRecord => ({
      ...log('c', name, body),
      eventName: name,
      attributes: { 'gen_ai.system': 'openai' },
    });
    const step = stepOf({ name: 'chat gpt-4o', id: 'c', attributes: { 'gen_ai.operation.name': 'chat' } }, [
      named('gen_ai.system.message', { role: 'system', content: 'Be brief.' }),
      named('gen_ai.user.message', { role: 'user', content: [{ type: 'text', text: 'Hi' }] }),
      named('gen_ai.choice', { index: 1, finish_reason: 'length', message: { role: 'assistant', content: 'B' } }),
      named('gen_ai.choice', { index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'A' } }),
    ]);
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
    ]);
    expect(step.response).toEqual([
      { role: 'assistant', content: 'A', finish_reason: 'stop' },
      { role: 'assistant', content: 'B', finish_reason: 'length' },
    ]);
  });

  it('reads a gen_ai.choice whose body carries the message fields directly', () => {
    const step = stepOf({ name: 'chat gpt-4o', id: 'c', attributes: { 'gen_ai.operation.name': 'chat' } }, [
      log('c', 'gen_ai.choice', {
        index: 0,
        finish_reason: 'tool_calls',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{}' } }],
      }),
    ]);
    expect(step.response).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'w', arguments: {} }], finish_reason: 'tool_calls' },
    ]);
  });

  it('reads v1.37+ gen_ai.client.inference.operation.details log records (structured attributes)', () => {
    const details: LogRecord = {
      ...log('c', 'x', null),
      eventName: 'gen_ai.client.inference.operation.details',
      attributes: {
        'gen_ai.system_instructions': [text('Be brief.')],
        'gen_ai.input.messages': [{ role: 'user', parts: [text('Hi')] }],
        'gen_ai.output.messages': [{ role: 'assistant', parts: [text('Yo')], finish_reason: 'stop' }],
      },
    };
    const step = stepOf({ name: 'chat gpt-4o', id: 'c', attributes: { 'gen_ai.operation.name': 'chat' } }, [details]);
    expect(step).toMatchObject({
      layout: 'otel-genai-events',
      request: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hi' },
      ],
      response: [{ role: 'assistant', content: 'Yo', finish_reason: 'stop' }],
    });
  });

  it('reads @opentelemetry/instrumentation-openai Responses API records: messages in the body, call_id links, streamed items joined', () => {
    const details = (body: LogRecord['body'], attributes: Attributes = {}): LogRecord => ({
      ...log('r', 'x', body),
      eventName: 'gen_ai.client.inference.operation.details',
      attributes: { 'gen_ai.provider.name': 'openai', ...attributes },
    });
    const responsesSpan = {
      name: 'responses gpt-4o',
      id: 'r',
      kind: 'client' as const,
      attributes: {
        'gen_ai.operation.name': 'responses',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.system_instructions': 'Be brief.', // raw string, on the span whatever the content setting
      },
    };
    const input = [
      { role: 'system', parts: [text('Be brief.')] },
      { role: 'user', parts: [text('Weather?')] },
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'fc_1', call_id: 'call_1', name: 'w', arguments: '{"city":"Paris"}' }],
      },
      { role: 'user', parts: [{ type: 'tool_call_response', call_id: 'call_1', response: '{"t":14}' }] },
    ];
    const expectedRequest = [
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'w', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: { t: 14 } },
    ];
    const output = [
      {
        role: 'assistant',
        finish_reason: 'stop',
        parts: [{ type: 'reasoning', text: 'Rain.' }, text('Rainy, 14 °C.')],
      },
    ];
    const whole = stepOf(responsesSpan, [details(input), details(output, { 'gen_ai.output.messages': output })]);
    expect(whole).toMatchObject({ layout: 'otel-genai-events', request: expectedRequest });
    expect(whole.response).toEqual([
      {
        role: 'assistant',
        finish_reason: 'stop',
        content: [
          { type: 'reasoning', text: 'Rain.' },
          { type: 'text', text: 'Rainy, 14 °C.' },
        ],
      },
    ]);
    // streamed: one body-only record per finished output item
    const streamed = stepOf(responsesSpan, [
      details(input),
      details([{ role: 'assistant', finish_reason: 'stop', parts: [{ type: 'reasoning', text: 'Rain.' }] }]),
      details([{ role: 'assistant', finish_reason: 'stop', parts: [text('Rainy, 14 °C.')] }]),
    ]);
    expect([streamed.request, streamed.response]).toEqual([whole.request, whole.response]);
    // without log records the instructions on the span are all that was recorded
    expect(stepOf(responsesSpan).request).toEqual([{ role: 'system', content: 'Be brief.' }]);
  });
});

describe('OpenLLMetry / Traceloop variants', () => {
  const legacy = (attributes: Attributes, name = 'anthropic.chat') =>
    stepOf({
      name,
      kind: 'client',
      scope: 'opentelemetry.instrumentation.anthropic',
      attributes: {
        'llm.request.type': 'chat',
        'gen_ai.system': 'Anthropic',
        'gen_ai.request.model': 'claude-sonnet-4-6',
        ...attributes,
      },
    });

  it('reads legacy indexed content given as a JSON string of Anthropic content blocks (tool_use, tool_result)', () => {
    const step = legacy({
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': j([{ type: 'text', text: 'Weather?' }]),
      'gen_ai.prompt.1.role': 'assistant',
      'gen_ai.prompt.1.content': j([
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'w', input: { city: 'Paris' } },
      ]),
      'gen_ai.prompt.2.role': 'user',
      'gen_ai.prompt.2.content': j([
        { type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: '{"t":14}' }] },
      ]),
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': 'Rainy.',
      'gen_ai.completion.0.finish_reason': 'end_turn',
    });
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather?' },
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'toolu_1', name: 'w', arguments: { city: 'Paris' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: { t: 14 } },
    ]);
    expect(step.response).toEqual([{ role: 'assistant', content: 'Rainy.', finish_reason: 'stop' }]);
  });

  it('reads legacy completion tool_calls.{j}.id/name/arguments and prompt tool_call_id (Python)', () => {
    const step = legacy(
      {
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'Weather?',
        'gen_ai.prompt.1.role': 'assistant',
        'gen_ai.prompt.1.tool_calls.0.id': 'call_1',
        'gen_ai.prompt.1.tool_calls.0.name': 'w',
        'gen_ai.prompt.1.tool_calls.0.arguments': '{"city":"Paris"}',
        'gen_ai.prompt.2.role': 'tool',
        'gen_ai.prompt.2.tool_call_id': 'call_1',
        'gen_ai.prompt.2.content': '{"t":14}',
        'gen_ai.completion.0.finish_reason': 'tool_calls', // no role: the answer is the assistant's
        'gen_ai.completion.0.tool_calls.0.id': 'call_2',
        'gen_ai.completion.0.tool_calls.0.name': 'w',
        'gen_ai.completion.0.tool_calls.0.arguments': '{"city":"Lyon"}',
        'gen_ai.completion.0.tool_calls.1.id': 'call_3',
        'gen_ai.completion.0.tool_calls.1.name': 'w',
        'gen_ai.completion.0.tool_calls.1.arguments': '{"city":"Nice"}',
      },
      'openai.chat',
    );
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'w', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: { t: 14 } },
    ]);
    expect(step.response).toEqual([
      {
        role: 'assistant',
        finish_reason: 'tool_calls',
        tool_calls: [
          { id: 'call_2', name: 'w', arguments: { city: 'Lyon' } },
          { id: 'call_3', name: 'w', arguments: { city: 'Nice' } },
        ],
      },
    ]);
  });

  it('reads a legacy completion-type span; llm.request.functions (tool definitions) are not messages', () => {
    const step = stepOf({
      name: 'openai.completion',
      attributes: {
        'llm.request.type': 'completion',
        'gen_ai.request.model': 'gpt-3.5-turbo-instruct',
        'llm.request.functions.0.name': 'w',
        'llm.request.functions.0.parameters': '{"type":"object"}',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'Once upon',
        'gen_ai.completion.0.content': ' a time',
        'gen_ai.completion.0.finish_reason': 'length',
      },
    });
    expect(step).toMatchObject({
      kind: 'llm',
      layout: 'openllmetry',
      request: [{ role: 'user', content: 'Once upon' }],
      response: [{ role: 'assistant', content: ' a time', finish_reason: 'length' }],
    });
  });

  it('reads a legacy span with content capture off as a Traceloop model call with no content', () => {
    const step = legacy({ 'gen_ai.usage.prompt_tokens': 12 }, 'openai.chat');
    expect(step).toMatchObject({
      kind: 'llm',
      layout: 'openllmetry',
      model: 'claude-sonnet-4-6',
      request: null,
      response: null,
    });
    expect(step.tokens.input).toBe(12);
  });

  it.each(['embedding', 'rerank', 'unknown'])(
    'treats llm.request.type=%s as context, with or without content',
    (type) => {
      const attrs = { 'llm.request.type': type, 'gen_ai.request.model': 'text-embedding-3-small' };
      expect(normalizeSpan(span({ name: 'openai.embeddings', attributes: attrs })).step).toBeNull();
      expect(
        normalizeSpan(span({ name: 'openai.embeddings', attributes: { ...attrs, 'gen_ai.prompt.0.content': 'Hi' } }))
          .step,
      ).toBeNull();
    },
  );

  it.each([
    ['workflow', null],
    ['task', null],
    ['session', null],
    ['unknown', null],
    ['agent', 'agent'],
    ['tool', 'tool'],
  ])('traceloop.span.kind=%s is a %s step', (kind, step) => {
    expect(
      normalizeSpan(
        span({ name: `x.${kind}`, attributes: { 'traceloop.span.kind': kind, 'traceloop.entity.name': 'x' } }),
      ).step?.kind ?? null,
    ).toBe(step);
  });

  it('reads traceloop.entity.input / output JSON; a non-JSON or non-string value is kept, never dropped', () => {
    const tool = stepOf({
      name: 'get_weather.tool',
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.name': 'get_weather',
        'traceloop.entity.input': j({ args: [], kwargs: { city: 'Paris' } }),
        'traceloop.entity.output': j({ temp_c: 14 }),
      },
    });
    expect(tool).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      request: { city: 'Paris' },
      response: { temp_c: 14 },
    });
    const odd = stepOf({
      name: 'w.tool',
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.input': '{not json',
        'traceloop.entity.output': 14,
      },
    });
    expect([odd.tool, odd.request, odd.response]).toEqual(['w', '{not json', 14]);
  });
});

describe('OpenInference variants', () => {
  const llm = (attributes: Attributes) =>
    stepOf({ name: 'ChatModel', attributes: { 'openinference.span.kind': 'LLM', ...attributes } });

  it.each([
    ['LLM', 'llm'],
    ['TOOL', 'tool'],
    ['AGENT', 'agent'],
    ['agent', 'agent'],
    ['CHAIN', null],
    ['RETRIEVER', null],
    ['EMBEDDING', null],
    ['RERANKER', null],
    ['GUARDRAIL', null],
    ['EVALUATOR', null],
    ['PROMPT', null],
    ['UNKNOWN', null],
  ])('openinference.span.kind=%s is a %s step', (kind, step) => {
    expect(normalizeSpan(span({ name: 'x', attributes: { 'openinference.span.kind': kind } })).step?.kind ?? null).toBe(
      step,
    );
  });

  it('reads message.contents.{j}.message_content text/image/reasoning parts and message.tool_calls', () => {
    const p = 'llm.input_messages.0.message.';
    const o = 'llm.output_messages.0.message.';
    const step = llm({
      [`${p}role`]: 'user',
      [`${p}contents.0.message_content.type`]: 'text',
      [`${p}contents.0.message_content.text`]: 'What is this?',
      [`${p}contents.1.message_content.type`]: 'image',
      [`${p}contents.1.message_content.image.image.url`]: 'data:image/png;base64,AAAA',
      [`${o}role`]: 'assistant',
      [`${o}contents.0.message_content.type`]: 'reasoning',
      [`${o}contents.0.message_content.text`]: 'Looks like a cat.',
      [`${o}tool_calls.0.tool_call.id`]: 'call_1',
      [`${o}tool_calls.0.tool_call.function.name`]: 'lookup',
      [`${o}tool_calls.0.tool_call.function.arguments`]: '{"q":"cat"}',
      'llm.finish_reason': 'tool_calls',
    });
    expect(step.request).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: 'AAAA', mime_type: 'image/png' },
        ],
      },
    ]);
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'reasoning', text: 'Looks like a cat.' }],
        tool_calls: [{ id: 'call_1', name: 'lookup', arguments: { q: 'cat' } }],
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('reads a tool result as role tool with message.tool_call_id', () => {
    const step = llm({
      'llm.input_messages.0.message.role': 'tool',
      'llm.input_messages.0.message.tool_call_id': 'call_1',
      'llm.input_messages.0.message.content': '{"t":14}',
    });
    expect(step.request).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: { t: 14 } }]);
  });

  it('reads legacy message.function_call_name / function_call_arguments_json as a tool call', () => {
    const step = llm({
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.function_call_name': 'get_weather',
      'llm.output_messages.0.message.function_call_arguments_json': '{"city":"Paris"}',
    });
    expect(step.response).toEqual([
      { role: 'assistant', tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }] },
    ]);
  });

  it('keeps the flattened messages when input.value holds messages in a shape it cannot read', () => {
    // a framework's own message serialisation under `messages`: no role, no content to read
    const step = llm({
      'input.mime_type': 'application/json',
      'input.value': j({
        messages: [{ lc: 1, type: 'constructor', id: ['langchain', 'HumanMessage'], kwargs: { content: 'Hi' } }],
      }),
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': 'Hi',
    });
    expect(step.request).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('reads text/plain input.value of an LLM span as no request body (the flattened keys stand)', () => {
    const step = llm({
      'input.mime_type': 'text/plain',
      'input.value': '{"messages":[]}',
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': 'Hi',
    });
    expect(step.request).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('reads a TOOL span: tool.name, tool.id; tool.parameters is the schema, not the arguments; mime types decide JSON', () => {
    const step = stepOf({
      name: 'get_weather',
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'get_weather',
        'tool.id': 'call_1',
        'tool.parameters': j({ type: 'object', properties: { city: { type: 'string' } } }),
        'input.value': '{"city":"Paris"}',
        'input.mime_type': 'application/json',
        'output.value': '"Rainy"',
        'output.mime_type': 'application/json',
      },
    });
    expect(step).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: 'Rainy',
    });
    const plain = stepOf({
      name: 'get_weather',
      attributes: {
        'openinference.span.kind': 'TOOL',
        'input.value': 'Paris',
        'input.mime_type': 'text/plain',
        'output.value': '"Rainy"',
        'output.mime_type': 'text/plain',
      },
    });
    expect(plain).toMatchObject({ tool: 'get_weather', request: 'Paris', response: '"Rainy"' });
  });
});

describe('Vercel AI SDK legacy ai.* variants', () => {
  const doGenerate = (attributes: Attributes, op = 'ai.generateText.doGenerate') =>
    stepOf({ name: op, scope: 'ai', attributes: { 'ai.operationId': op, 'ai.model.id': 'gpt-4o', ...attributes } });

  it('reads v4 prompt parts (tool-call args, tool-result result) and v4 response tool calls like v5+', () => {
    const v4 = doGenerate({
      'ai.prompt.messages': j([
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'w', args: { city: 'Paris' } }],
        },
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'w', result: { t: 14 } }] },
      ]),
      'ai.response.toolCalls': j([
        { toolCallType: 'function', toolCallId: 'call_2', toolName: 'w', args: '{"city":"Lyon"}' },
      ]),
      'ai.response.finishReason': 'tool-calls',
    });
    const v5 = doGenerate({
      'ai.prompt.messages': j([
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'w', input: { city: 'Paris' } }],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'call_1', toolName: 'w', output: { type: 'json', value: { t: 14 } } },
          ],
        },
      ]),
      'ai.response.toolCalls': j([{ toolCallId: 'call_2', toolName: 'w', input: { city: 'Lyon' } }]), // v7 legacy: input as an object
      'ai.response.finishReason': 'tool-calls',
    });
    expect(v4.request).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'w', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: { t: 14 } },
    ]);
    expect(v4.response).toEqual([
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_2', name: 'w', arguments: { city: 'Lyon' } }],
        finish_reason: 'tool_calls',
      },
    ]);
    expect([v5.request, v5.response]).toEqual([v4.request, v4.response]);
  });

  it('reads a streamText.doStream step and a generateObject step (ai.response.object)', () => {
    const stream = doGenerate(
      {
        'ai.prompt.messages': j([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]),
        'ai.response.text': 'Yo',
        'ai.response.finishReason': 'stop',
      },
      'ai.streamText.doStream',
    );
    expect(stream).toMatchObject({
      kind: 'llm',
      response: [{ role: 'assistant', content: 'Yo', finish_reason: 'stop' }],
    });
    const object = doGenerate(
      {
        'ai.prompt.messages': j([{ role: 'user', content: [{ type: 'text', text: 'A city' }] }]),
        'ai.response.object': '{"city":"Paris"}',
        'ai.response.finishReason': 'stop',
      },
      'ai.generateObject.doGenerate',
    );
    expect(object).toMatchObject({
      kind: 'llm',
      response: [{ role: 'assistant', content: { city: 'Paris' }, finish_reason: 'stop' }],
    });
  });

  it('treats the outer generateText / streamText / embed spans as context', () => {
    for (const op of [
      'ai.generateText',
      'ai.streamText',
      'ai.generateObject',
      'ai.embed',
      'ai.embed.doEmbed',
      'ai.embedMany.doEmbed',
    ]) {
      expect(
        normalizeSpan(span({ name: op, attributes: { 'ai.operationId': op, 'ai.response.text': 'x' } })).step,
        op,
      ).toBeNull();
    }
  });

  it('reads AI SDK spans the Traceloop SDK rewrote in place (content moved to gen_ai.*, ai.operationId kept)', () => {
    // node-server-sdk ai-sdk-transformations.ts: ai.prompt.messages → gen_ai.input.messages,
    // ai.response.* → gen_ai.output.messages, ai.model.id → gen_ai.request.model, ai.toolCall.id →
    // gen_ai.tool.call.id; the ai.* content keys are deleted, span renamed `chat {model}`.
    const llm = stepOf({
      name: 'chat gpt-4o',
      scope: 'ai',
      attributes: {
        'ai.operationId': 'ai.generateText.doGenerate',
        'operation.name': 'ai.generateText.doGenerate',
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.provider.name': 'openai',
        'gen_ai.input.messages': j([{ role: 'user', parts: [text('Weather?')] }]),
        'gen_ai.output.messages': j([
          {
            role: 'assistant',
            finish_reason: 'tool_call',
            parts: [{ type: 'tool_call', name: 'w', id: 'call_1', arguments: { city: 'Paris' } }],
          },
        ]),
        'gen_ai.response.finish_reasons': ['tool_call'],
        'gen_ai.usage.input_tokens': 20,
        'gen_ai.usage.output_tokens': 5,
        'traceloop.association.properties.sessionId': 's-1',
        'gen_ai.conversation.id': 's-1',
      },
    });
    expect(llm).toMatchObject({
      kind: 'llm',
      model: 'gpt-4o',
      request: [{ role: 'user', content: 'Weather?' }],
      response: [
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_1', name: 'w', arguments: { city: 'Paris' } }],
          finish_reason: 'tool_calls',
        },
      ],
    });
    expect(llm.tokens.input).toBe(20);
    // the outer call span keeps ai.operationId too: still context, not a second model step
    expect(
      normalizeSpan(
        span({
          name: 'chat gpt-4o',
          scope: 'ai',
          attributes: {
            'ai.operationId': 'ai.generateText',
            'gen_ai.operation.name': 'chat',
            'gen_ai.output.messages': j([{ role: 'assistant', parts: [text('x')] }]),
          },
        }),
      ).step,
    ).toBeNull();
    // a tool span without a result keeps ai.toolCall.args and gets gen_ai.tool.call.id
    const tool = stepOf({
      name: 'execute_tool w',
      scope: 'ai',
      attributes: {
        'ai.operationId': 'ai.toolCall',
        'ai.toolCall.name': 'w',
        'ai.toolCall.args': '{"city":"Paris"}',
        'gen_ai.tool.name': 'w',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.tool.call.arguments': '{"city":"Paris"}',
        'gen_ai.operation.name': 'execute_tool',
      },
    });
    expect(tool).toMatchObject({
      kind: 'tool',
      tool: 'w',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: null,
    });
    // with a result the transform marks it a Traceloop tool span: read from traceloop.entity.*
    const marked = stepOf({
      name: 'execute_tool w',
      scope: 'ai',
      attributes: {
        'ai.operationId': 'ai.toolCall',
        'traceloop.span.kind': 'tool',
        'traceloop.entity.name': 'w',
        'traceloop.entity.input': '{"city":"Paris"}',
        'traceloop.entity.output': '{"t":14}',
        'gen_ai.tool.call.id': 'call_1',
        'gen_ai.operation.name': 'execute_tool',
      },
    });
    expect(marked).toMatchObject({
      kind: 'tool',
      tool: 'w',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: { t: 14 },
    });
  });

  it('reads ai.toolCall with args/result or the v5-era input/output keys', () => {
    const a = stepOf({
      name: 'ai.toolCall',
      attributes: {
        'ai.operationId': 'ai.toolCall',
        'ai.toolCall.name': 'w',
        'ai.toolCall.id': 'call_1',
        'ai.toolCall.args': '{"city":"Paris"}',
        'ai.toolCall.result': '{"t":14}',
      },
    });
    const b = stepOf({
      name: 'ai.toolCall',
      attributes: {
        'ai.operationId': 'ai.toolCall',
        'ai.toolCall.name': 'w',
        'ai.toolCall.id': 'call_1',
        'ai.toolCall.input': '{"city":"Paris"}',
        'ai.toolCall.output': '{"t":14}',
      },
    });
    expect(a).toMatchObject({
      kind: 'tool',
      tool: 'w',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: { t: 14 },
    });
    expect([b.request, b.response]).toEqual([a.request, a.response]);
  });
});

describe('robustness: wrong types and malformed values never throw', () => {
  const cases: [string, SpanInit][] = [
    [
      'gen_ai messages: a number and invalid JSON',
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': 5,
          'gen_ai.output.messages': '[{"role":',
        },
      },
    ],
    [
      'gen_ai messages: an object, not a list',
      { attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.input.messages': '{"role":"user"}' } },
    ],
    [
      'gen_ai parts of wrong types',
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.input.messages': j([
            { role: 5, parts: 'x' },
            null,
            3,
            {
              role: 'user',
              parts: [null, 1, { type: 5, content: 7 }, { type: 'tool_call' }, { type: 'tool_call_response' }],
            },
          ]),
        },
      },
    ],
    [
      'finish reasons of wrong types',
      {
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.response.finish_reasons': [1, null],
          'gen_ai.output.messages': j([{ parts: [text('x')] }]),
        },
      },
    ],
    ['operation name a number', { attributes: { 'gen_ai.operation.name': 7, 'gen_ai.request.model': 3 } }],
    [
      'bigint and bytes values',
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.call.arguments': { n: 12345678901234567890n },
          'gen_ai.tool.call.result': new Uint8Array([1, 2]),
        },
      },
    ],
    [
      'legacy indexed: huge and sparse indexes, number content',
      {
        attributes: {
          'llm.request.type': 'chat',
          'gen_ai.prompt.99999999999999999999999.content': 'Hi',
          'gen_ai.prompt.3.content': 5,
          'gen_ai.prompt.x.content': 'no index',
          'gen_ai.completion.0.tool_calls.7.name': 9,
        },
      },
    ],
    [
      'OpenInference: bigint and bytes content, odd kinds',
      {
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.input_messages.0.message.content': 12345678901234567890n,
          'llm.input_messages.1.message.content': new Uint8Array([1]),
          'llm.input_messages.2.message.role': ['user'],
          'input.value': '{',
          'input.mime_type': 'application/json',
        },
      },
    ],
    ['OpenInference kind not a string', { attributes: { 'openinference.span.kind': 3 } }],
    [
      'Traceloop entity values of wrong types',
      {
        attributes: {
          'traceloop.span.kind': 'tool',
          'traceloop.entity.input': [1, 'x'],
          'traceloop.entity.output': new Uint8Array([1]),
        },
      },
    ],
    [
      'Vercel: non-string response text and bad tool calls',
      {
        attributes: {
          'ai.operationId': 'ai.generateText.doGenerate',
          'ai.response.text': 12345678901234567890n,
          'ai.response.toolCalls': '{bad',
          'ai.prompt.messages': 'nope',
        },
      },
    ],
    [
      'events with null, scalar and list bodies',
      {
        attributes: { 'gen_ai.operation.name': 'chat' },
        events: [
          { name: 'gen_ai.choice', attributes: { message: '{bad' } },
          { name: 'gen_ai.content.prompt', attributes: { 'gen_ai.prompt': 3 } },
        ],
      },
    ],
  ];

  it.each(cases)('%s', (_label, init) => {
    const facts = normalizeSpan(span({ name: 'x', id: 'x', ...init }), [
      { ...log('x', 'gen_ai.choice', null) },
      { ...log('x', 'gen_ai.user.message', [1, 2]) },
      { ...log('x', 'gen_ai.tool.message', 'text') },
    ]);
    // whatever was read must have a canonical JSON form (digests are taken of it)
    if (facts.step) expect(() => finishStep(facts.step as StepDraft)).not.toThrow();
  });

  it('keeps a span no dialect understands as a span with no step', () => {
    expect(
      normalizeSpan(span({ name: 'GET /weather', kind: 'client', attributes: { 'http.request.method': 'GET' } })),
    ).toEqual({ ownRun: null, parentRun: null, step: null });
  });

  it('reads a bigint where message content was expected as a number string, and drops bytes', () => {
    const step = stepOf({
      name: 'LLM',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 12345678901234567890n,
        'llm.input_messages.1.message.role': 'user',
        'llm.input_messages.1.message.content': new Uint8Array([1]),
      },
    });
    expect(step.request).toEqual([{ role: 'user', content: '12345678901234567890' }, { role: 'user' }]);
  });

  it('turns a dialect that throws into a span with no step, not a failed export', () => {
    const throwing = {
      name: 'otel-genai' as const,
      matches: () => true,
      read: () => {
        throw new Error('unforeseen shape');
      },
    };
    const told: [string, string][] = [];
    const facts = normalizeSpan(span({ attributes: { 'session.id': 's1' } }), [], [throwing], (error, layout) => {
      told.push([(error as Error).message, layout]);
    });
    expect(facts).toEqual({ ownRun: 's1', parentRun: null, step: null });
    expect(told).toEqual([['unforeseen shape', 'otel-genai']]); // said, not swallowed: ingest logs a warning
  });
});
