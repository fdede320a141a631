/**
 * Span layouts as particular instrumentation libraries and versions emit them, beyond the
 * corpus captures: each test names the library, its version and where the shape was read, and
 * builds the span the way that library writes it.
 */
import { describe, expect, it } from 'vitest';
import { normalizeSpan as normalizeRecorded } from '../../../src/normalize/normalize.js';
import { comparableFacts } from '../../helpers/comparable-facts.js';
import type { Attributes, LogRecord } from '../../../src/spans/span-record.js';
import type { StepDraft } from '../../../src/normalize/step.js';
import { log, span, type SpanInit } from '../../helpers/span-builder.js';

/** Read as digests read it (JSON-shaped text as JSON): the stored text is pinned in recorded-text.test.ts. */
const normalizeSpan = (...args: Parameters<typeof normalizeRecorded>) => comparableFacts(normalizeRecorded(...args));

const j = (v: unknown) => JSON.stringify(v);
const stepOf = (init: SpanInit) => normalizeSpan(span(init)).step as StepDraft;

describe('OpenInference Bedrock (Converse content blocks in input.value / output.value)', () => {
  // openinference-instrumentation-bedrock (Python), _converse_attributes.py and _wrappers.py
  // (_NovaStreamCallback): input.value = JSON of the request's `messages` list, output.value =
  // JSON of the answer message, both in the Converse shape ({"text"}, {"toolUse"}, {"toolResult"}
  // blocks, no `type`); the flattened llm.*_messages keys carry the same messages, the system
  // prompt and llm.finish_reason (raw stopReason).
  const converse = (attributes: Attributes) =>
    stepOf({
      name: 'bedrock.converse',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.provider': 'aws',
        'llm.model_name': 'anthropic.claude-3-haiku',
        'input.mime_type': 'application/json',
        'output.mime_type': 'application/json',
        ...attributes,
      },
    });

  it('reads text and toolUse blocks of the answer body, with the finish reason from llm.finish_reason', () => {
    const step = converse({
      'input.value': j([{ role: 'user', content: [{ text: 'Weather in Paris?' }] }]),
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.contents.0.message_content.type': 'text',
      'llm.input_messages.0.message.contents.0.message_content.text': 'Weather in Paris?',
      'output.value': j({
        role: 'assistant',
        content: [
          { text: 'Checking.' },
          { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } },
        ],
      }),
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.contents.0.message_content.type': 'text',
      'llm.output_messages.0.message.contents.0.message_content.text': 'Checking.',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'tooluse_1',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city": "Paris"}',
      'llm.finish_reason': 'tool_use',
    });
    expect(step.request).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'tooluse_1', name: 'get_weather', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('reads toolResult blocks (text or json content) as tool messages, one per block', () => {
    const step = converse({
      'input.value': j([
        { role: 'user', content: [{ text: 'Weather in Paris and Lyon?' }] },
        {
          role: 'assistant',
          content: [
            { toolUse: { toolUseId: 't1', name: 'w', input: { city: 'Paris' } } },
            { toolUse: { toolUseId: 't2', name: 'w', input: { city: 'Lyon' } } },
          ],
        },
        {
          role: 'user',
          content: [
            { toolResult: { toolUseId: 't1', content: [{ json: { temp_c: 14 } }], status: 'success' } },
            { toolResult: { toolUseId: 't2', content: [{ text: 'Sunny' }] } },
          ],
        },
      ]),
      'output.value': j({ role: 'assistant', content: [{ text: 'Rainy in Paris, sunny in Lyon.' }] }),
      'llm.finish_reason': 'end_turn',
    });
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather in Paris and Lyon?' },
      {
        role: 'assistant',
        tool_calls: [
          { id: 't1', name: 'w', arguments: { city: 'Paris' } },
          { id: 't2', name: 'w', arguments: { city: 'Lyon' } },
        ],
      },
      { role: 'tool', tool_call_id: 't1', content: { temp_c: 14 } },
      { role: 'tool', tool_call_id: 't2', content: 'Sunny' },
    ]);
    expect(step.response).toEqual([
      { role: 'assistant', content: 'Rainy in Paris, sunny in Lyon.', finish_reason: 'stop' },
    ]);
  });

  it('reads a whole Converse request / response body (system blocks, image bytes, output.message, stopReason)', () => {
    const step = converse({
      'input.value': j({
        modelId: 'anthropic.claude-3-haiku',
        system: [{ text: 'Be brief.' }],
        messages: [
          {
            role: 'user',
            content: [{ text: 'What is this?' }, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }],
          },
        ],
        inferenceConfig: { maxTokens: 100 },
      }),
      'output.value': j({
        output: {
          message: {
            role: 'assistant',
            content: [{ reasoningContent: { reasoningText: { text: 'A cat?' } } }, { text: 'A cat.' }],
          },
        },
        stopReason: 'end_turn',
        usage: { inputTokens: 10, outputTokens: 3, totalTokens: 13 },
      }),
    });
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', mime_type: 'image/png', data: 'iVBORw0KGgo=' },
        ],
      },
    ]);
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'A cat?' },
          { type: 'text', text: 'A cat.' },
        ],
        finish_reason: 'stop',
      },
    ]);
  });
});

describe('Vercel AI SDK image and file parts', () => {
  // ai.prompt.messages holds the provider-level prompt: AI SDK v4 (LanguageModelV1Prompt)
  // {type:"image", image:<base64 | URL>, mimeType} and {type:"file", data, mimeType};
  // v5+ (LanguageModelV2Prompt) {type:"file", data, mediaType, filename}, images included
  // (vercel/ai content/docs telemetry; @ai-sdk/provider prompt types). Binary data is recorded
  // as base64 text.
  const doGenerate = (messages: unknown) =>
    stepOf({
      name: 'ai.generateText.doGenerate',
      scope: 'ai',
      attributes: {
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.id': 'gpt-4o',
        'ai.prompt.messages': j(messages),
      },
    });

  it('keeps the data, URL, media type and file name of v4 and v5 parts', () => {
    const v4 = doGenerate([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'image', image: 'iVBORw0KGgo=', mimeType: 'image/png' },
          { type: 'image', image: 'https://x/cat.jpg' },
          { type: 'file', data: 'JVBERi0=', mimeType: 'application/pdf' },
        ],
      },
    ]);
    expect(v4.request).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'image', data: 'iVBORw0KGgo=', mime_type: 'image/png' },
          { type: 'image', url: 'https://x/cat.jpg' },
          { type: 'file', data: 'JVBERi0=', mime_type: 'application/pdf' },
        ],
      },
    ]);
    const v5 = doGenerate([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'file', data: 'iVBORw0KGgo=', mediaType: 'image/png' },
          { type: 'file', data: 'https://x/cat.jpg', mediaType: 'image/jpeg' },
          { type: 'file', data: 'JVBERi0=', mediaType: 'application/pdf', filename: 'a.pdf' },
        ],
      },
    ]);
    expect(v5.request).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare' },
          { type: 'image', data: 'iVBORw0KGgo=', mime_type: 'image/png' },
          { type: 'image', url: 'https://x/cat.jpg', mime_type: 'image/jpeg' },
          { type: 'file', data: 'JVBERi0=', mime_type: 'application/pdf', filename: 'a.pdf' },
        ],
      },
    ]);
  });

  it('keeps an OpenAI chat file part ({type:"file", file:{file_data | file_id, filename}})', () => {
    const step = stepOf({
      name: 'ChatModel',
      attributes: {
        'openinference.span.kind': 'LLM',
        'input.mime_type': 'application/json',
        'input.value': j({
          model: 'gpt-4o',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } },
                { type: 'file', file: { file_id: 'file-1' } },
              ],
            },
          ],
        }),
      },
    });
    expect(step.request).toEqual([
      {
        role: 'user',
        content: [
          { type: 'file', data: 'JVBERi0=', mime_type: 'application/pdf', filename: 'a.pdf' },
          { type: 'file', file_id: 'file-1' },
        ],
      },
    ]);
  });
});

describe('Vercel AI SDK spans without ai.operationId', () => {
  // Early AI SDK telemetry (3.x) set only `operation.name` ("ai.generateText <functionId>");
  // ai.operationId came later. The span names are the operation ids (telemetry docs).
  it('reads doGenerate and toolCall spans by operation.name or span name, and keeps the outer call span context', () => {
    const inner = stepOf({
      name: 'ai.generateText.doGenerate',
      scope: 'ai',
      attributes: {
        'operation.name': 'ai.generateText.doGenerate weather',
        'ai.model.id': 'gpt-4o',
        'gen_ai.system': 'openai.chat',
        'gen_ai.request.model': 'gpt-4o',
        'ai.prompt.messages': j([{ role: 'user', content: [{ type: 'text', text: 'Weather?' }] }]),
        'ai.response.text': 'Rainy.',
        'ai.response.finishReason': 'stop',
        'gen_ai.usage.input_tokens': 5,
      },
    });
    expect(inner).toMatchObject({
      kind: 'llm',
      layout: 'vercel-ai',
      request: [{ role: 'user', content: 'Weather?' }],
      response: [{ role: 'assistant', content: 'Rainy.', finish_reason: 'stop' }],
    });
    const outer = normalizeSpan(
      span({
        name: 'ai.generateText',
        scope: 'ai',
        attributes: {
          'operation.name': 'ai.generateText weather',
          'ai.model.id': 'gpt-4o',
          'gen_ai.request.model': 'gpt-4o',
          'ai.response.text': 'Rainy.',
          'gen_ai.usage.input_tokens': 5,
        },
      }),
    );
    expect(outer.step).toBeNull();
    const tool = stepOf({
      name: 'ai.toolCall',
      attributes: {
        'ai.toolCall.name': 'w',
        'ai.toolCall.id': 'call_1',
        'ai.toolCall.args': '{"city":"Paris"}',
        'ai.toolCall.result': '{"t":14}',
      },
    });
    expect(tool).toMatchObject({
      kind: 'tool',
      tool: 'w',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: { t: 14 },
    });
  });

  it('keeps the outer call span context when the Traceloop SDK rewrote it with legacy indexed keys', () => {
    // @traceloop/node-server-sdk ai-sdk-transformations.ts (0.1x): ai.generateText is renamed
    // `run.ai`, its ai.prompt / ai.response.text become gen_ai.prompt.0.* / gen_ai.completion.0.*
    // exactly as on the doGenerate span (`text.generate`); ai.operationId stays.
    const rewritten = (name: string, op: string) =>
      normalizeSpan(
        span({
          name,
          scope: 'ai',
          attributes: {
            'ai.operationId': op,
            'operation.name': op,
            'gen_ai.system': 'OpenAI',
            'ai.model.id': 'gpt-4o',
            'gen_ai.prompt.0.role': 'user',
            'gen_ai.prompt.0.content': 'Weather?',
            'gen_ai.completion.0.role': 'assistant',
            'gen_ai.completion.0.content': 'Rainy.',
            'gen_ai.input.messages': j([{ role: 'user', parts: [{ type: 'text', content: 'Weather?' }] }]),
            'gen_ai.output.messages': j([{ role: 'assistant', parts: [{ type: 'text', content: 'Rainy.' }] }]),
          },
        }),
      ).step;
    expect(rewritten('run.ai', 'ai.generateText')).toBeNull();
    expect(rewritten('text.generate', 'ai.generateText.doGenerate')).toMatchObject({
      kind: 'llm',
      request: [{ role: 'user', content: 'Weather?' }],
      response: [{ role: 'assistant', content: 'Rainy.' }],
    });
  });

  it('reads the tool calls the Traceloop SDK rewrote into nested tool_call parts', () => {
    // ai-sdk-transformations.ts transformResponseToolCalls: {type:"tool_call", tool_call:{name, arguments}}
    const step = stepOf({
      name: 'text.generate',
      scope: 'ai',
      attributes: {
        'ai.operationId': 'ai.generateText.doGenerate',
        'gen_ai.input.messages': j([{ role: 'user', parts: [{ type: 'text', content: 'Weather?' }] }]),
        'gen_ai.output.messages': j([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', tool_call: { name: 'w', arguments: '{"city":"Paris"}' } }],
          },
        ]),
      },
    });
    expect(step.response).toEqual([{ role: 'assistant', tool_calls: [{ name: 'w', arguments: { city: 'Paris' } }] }]);
  });

  it('reads a tool span the Traceloop SDK rewrote (args/result moved to traceloop.entity.*, no span kind)', () => {
    const tool = stepOf({
      name: 'w.tool',
      scope: 'ai',
      attributes: {
        'ai.operationId': 'ai.toolCall',
        'ai.toolCall.name': 'w',
        'ai.toolCall.id': 'call_1',
        'traceloop.entity.input': '{"city":"Paris"}',
        'traceloop.entity.output': '{"t":14}',
      },
    });
    expect(tool).toMatchObject({
      kind: 'tool',
      tool: 'w',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: { t: 14 },
    });
  });
});

describe('pydantic-ai instrumentation (logfire-style gen_ai spans)', () => {
  // pydantic-ai models/instrumented.py, instrumentation version 1 with event_mode="attributes"
  // (the default before version 2): the span `chat {model}` carries the GenAI events as one JSON
  // attribute `events`, each event its body merged with its attributes (event.name,
  // gen_ai.system, gen_ai.message.index); the choice body holds `message`.
  it('reads version-1 events recorded in the `events` span attribute', () => {
    const step = stepOf({
      name: 'chat gpt-4o',
      scope: 'pydantic-ai',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        events: j([
          { content: 'Be brief.', role: 'system', 'gen_ai.system': 'openai', 'event.name': 'gen_ai.system.message' },
          {
            content: 'Weather in Paris?',
            role: 'user',
            'gen_ai.system': 'openai',
            'gen_ai.message.index': 0,
            'event.name': 'gen_ai.user.message',
          },
          {
            role: 'assistant',
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
            'gen_ai.system': 'openai',
            'gen_ai.message.index': 1,
            'event.name': 'gen_ai.assistant.message',
          },
          {
            content: { temp_c: 14 },
            role: 'tool',
            id: 'call_1',
            name: 'get_weather',
            'gen_ai.system': 'openai',
            'gen_ai.message.index': 2,
            'event.name': 'gen_ai.tool.message',
          },
          {
            index: 0,
            message: { role: 'assistant', content: 'Rainy, 14 °C.' },
            'gen_ai.system': 'openai',
            'event.name': 'gen_ai.choice',
          },
        ]),
      },
    });
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: { temp_c: 14 } },
    ]);
    expect(step.response).toEqual([{ role: 'assistant', content: 'Rainy, 14 °C.' }]);
  });

  it('reads version-1/2 `running tool` spans: tool_arguments / tool_response', () => {
    // pydantic-ai _tool_manager.py / InstrumentationNames.for_version(≤2): span `running tool`,
    // gen_ai.tool.name, gen_ai.tool.call.id, tool_arguments (JSON text), tool_response.
    const step = stepOf({
      name: 'running tool',
      scope: 'pydantic-ai',
      attributes: {
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.id': 'call_1',
        tool_arguments: '{"city":"Paris"}',
        tool_response: '{"temp_c":14}',
        'logfire.msg': 'running tool: get_weather',
      },
    });
    expect(step).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: { temp_c: 14 },
    });
  });

  // pydantic-ai agent/__init__.py iter(): the run span is `invoke_agent {agent}` (instrumentation
  // version 3+) or `agent run` (≤ 2), with model_name, agent_name, gen_ai.agent.name and
  // logfire.msg at start; at end final_result (content on), pydantic_ai.all_messages (the whole
  // conversation as OTel GenAI messages, version 2+), gen_ai.system_instructions and the run's
  // summed gen_ai.usage.*. No gen_ai.operation.name.
  const conversation = [
    { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
    {
      role: 'assistant',
      parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
    },
    {
      role: 'user',
      parts: [{ type: 'tool_call_response', id: 'call_1', name: 'get_weather', result: { temp_c: 14 } }],
    },
    { role: 'assistant', parts: [{ type: 'text', content: 'Rainy, 14 °C.' }], finish_reason: 'stop' },
  ];
  const agentRun = (name: string, attributes: Attributes) =>
    stepOf({
      name,
      scope: 'pydantic-ai',
      attributes: {
        model_name: 'gpt-4o',
        agent_name: 'weather_agent',
        'gen_ai.agent.name': 'weather_agent',
        'logfire.msg': 'weather_agent run',
        ...attributes,
      },
    });

  it('reads an agent run span as an agent step: the prompt after the instructions, and the last answer', () => {
    for (const name of ['invoke_agent weather_agent', 'agent run']) {
      const step = agentRun(name, {
        final_result: 'Rainy, 14 °C.',
        'pydantic_ai.all_messages': j(conversation),
        'gen_ai.system_instructions': j([{ type: 'text', content: 'Be brief.' }]),
        'gen_ai.usage.input_tokens': 50,
        'gen_ai.usage.output_tokens': 9,
      });
      expect(step).toMatchObject({ kind: 'agent', name: 'weather_agent', model: 'gpt-4o' });
      // the instructions are configuration, outside the request (agent-exchange.ts)
      expect(step.request).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
      expect(step.params.instructions).toEqual([{ role: 'system', content: 'Be brief.' }]);
      expect(step.response).toEqual([{ role: 'assistant', content: 'Rainy, 14 °C.' }]);
    }
  });

  it('answers with final_result where the conversation does not end with the answer, and with nothing when content is off', () => {
    // a structured output ends with the output tool's result; final_result is its JSON
    const structured = agentRun('invoke_agent weather_agent', {
      final_result: j({ city: 'Paris', temp_c: 14 }),
      'pydantic_ai.all_messages': j([
        conversation[0],
        {
          role: 'assistant',
          parts: [{ type: 'tool_call', id: 'o1', name: 'final_result', arguments: { city: 'Paris', temp_c: 14 } }],
        },
        {
          role: 'user',
          parts: [{ type: 'tool_call_response', id: 'o1', name: 'final_result', result: 'Final result processed.' }],
        },
      ]),
    });
    expect(structured.request).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
    expect(structured.response).toEqual([{ role: 'assistant', content: { city: 'Paris', temp_c: 14 } }]);
    // include_content=False: roles and parts' types only, no final_result
    const off = agentRun('invoke_agent weather_agent', {
      'pydantic_ai.all_messages': j([
        { role: 'user', parts: [{ type: 'text' }] },
        { role: 'assistant', parts: [{ type: 'text' }], finish_reason: 'stop' },
      ]),
    });
    expect(off).toMatchObject({ kind: 'agent', request: null, response: null });
  });
});

describe('OpenLLMetry LangChain callback wrappers in traceloop.entity.*', () => {
  // opentelemetry-instrumentation-langchain callback_handler.py: on_tool_start writes
  // {"input_str", "tags", "metadata", "inputs", "kwargs"}, on_tool_end {"output", "kwargs"}.
  it('unwraps a tool input to its inputs (else input_str) and its output to the output', () => {
    const step = stepOf({
      name: 'get_weather.tool',
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.name': 'get_weather',
        'traceloop.entity.input': j({
          input_str: "{'city': 'Paris'}",
          tags: [],
          metadata: {},
          inputs: { city: 'Paris' },
          kwargs: { color: 'green' },
        }),
        'traceloop.entity.output': j({ output: '{"temp_c": 14}', kwargs: { color: 'green', name: 'get_weather' } }),
      },
    });
    expect(step).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      request: { city: 'Paris' },
      response: { temp_c: 14 },
    });
    const plain = stepOf({
      name: 'search.tool',
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.input': j({ input_str: 'Paris', tags: null, metadata: null, inputs: null, kwargs: {} }),
        'traceloop.entity.output': j({ output: 'Rainy', kwargs: {} }),
      },
    });
    expect([plain.request, plain.response]).toEqual(['Paris', 'Rainy']);
    // a tool that returned a ToolMessage: CallbackFilteredJSONEncoder writes its to_json()
    const message = stepOf({
      name: 'get_weather.tool',
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.input': j({ input_str: '{}', inputs: { city: 'Paris' }, tags: [], metadata: {}, kwargs: {} }),
        'traceloop.entity.output': j({
          output: {
            lc: 1,
            type: 'constructor',
            id: ['langchain', 'schema', 'messages', 'ToolMessage'],
            kwargs: {
              content: '{"temp_c": 14}',
              type: 'tool',
              name: 'get_weather',
              tool_call_id: 'call_1',
              status: 'success',
            },
          },
          kwargs: {},
        }),
      },
    });
    expect(message).toMatchObject({ request: { city: 'Paris' }, response: { temp_c: 14 }, toolCallId: 'call_1' });
  });
});

describe('OpenInference LangChain (openinference-instrumentation-langchain)', () => {
  // openinference-instrumentation-langchain (Python), _tracer.py: _update_span writes input.value /
  // output.value through _convert_io (a single string value as itself, JSON mime only when it
  // parses as an object or array; anything else JSON with the JSON encoder, which model_dump()s
  // pydantic objects), _tools writes tool.name / tool.description (no tool.id), and
  // _input_messages / _output_messages flatten run.inputs.messages[0] and
  // run.outputs.generations[0][*].message through _parse_message_data. The tracer's scope is the
  // package module name.
  const scope = 'openinference.instrumentation.langchain';
  const toolSpan = (attributes: Attributes) =>
    stepOf({
      name: 'get_weather',
      scope,
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'get_weather',
        'tool.description': 'Weather for a city.',
        ...attributes,
      },
    });
  const toolMessage = {
    content: '{"temp_c": 14}',
    type: 'tool',
    name: 'get_weather',
    tool_call_id: 'call_1',
    status: 'success',
  };

  it('reads a TOOL span: the str(dict) input as the arguments, a ToolMessage output as its content and tool call id', () => {
    // run.inputs = {"input": str(tool_input)}: a Python repr, no mime type (not JSON)
    const input = { 'input.value': "{'city': 'Paris', 'units': None, 'exact': True, 'days': (1, 2)}" };
    // run.outputs = {"output": ToolMessage}, as to_json() (older releases) ...
    const lc = toolSpan({
      ...input,
      'output.mime_type': 'application/json',
      'output.value': j({
        lc: 1,
        type: 'constructor',
        id: ['langchain', 'schema', 'messages', 'ToolMessage'],
        kwargs: toolMessage,
      }),
    });
    expect(lc).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      toolCallId: 'call_1',
      request: { city: 'Paris', units: null, exact: true, days: [1, 2] },
      response: { temp_c: 14 },
    });
    // ... or as model_dump() (the JSON encoder of current releases)
    const dumped = toolSpan({
      ...input,
      'output.mime_type': 'application/json',
      'output.value': j({ ...toolMessage, additional_kwargs: {}, response_metadata: {}, id: null, artifact: null }),
    });
    expect(dumped).toMatchObject({ toolCallId: 'call_1', response: { temp_c: 14 } });
    // a tool that returned plain text; a plain string input stays text
    const plain = toolSpan({ 'input.value': 'Paris', 'output.value': 'Rainy, 14 °C' });
    expect(plain).toMatchObject({ toolCallId: null, request: 'Paris', response: 'Rainy, 14 °C' });
  });

  const human = {
    lc: 1,
    type: 'constructor',
    id: ['langchain', 'schema', 'messages', 'HumanMessage'],
    kwargs: { content: 'Weather in Paris?', type: 'human' },
  };
  const system = {
    lc: 1,
    type: 'constructor',
    id: ['langchain', 'schema', 'messages', 'SystemMessage'],
    kwargs: { content: 'Be brief.', type: 'system' },
  };
  const callingAi = {
    lc: 1,
    type: 'constructor',
    id: ['langchain', 'schema', 'messages', 'AIMessage'],
    kwargs: {
      content: '',
      type: 'ai',
      additional_kwargs: {
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      tool_calls: [{ name: 'get_weather', args: { city: 'Paris' }, id: 'call_1', type: 'tool_call' }],
      response_metadata: { finish_reason: 'tool_calls', model_name: 'gpt-4o' },
    },
  };
  const toolMsg = {
    lc: 1,
    type: 'constructor',
    id: ['langchain', 'schema', 'messages', 'ToolMessage'],
    kwargs: toolMessage,
  };
  const answer = {
    lc: 1,
    type: 'constructor',
    id: ['langchain', 'schema', 'messages', 'AIMessage'],
    kwargs: { content: 'Rainy, 14 °C.', type: 'ai', response_metadata: { finish_reason: 'stop' } },
  };
  const llmSpan = (attributes: Attributes) =>
    stepOf({
      name: 'ChatOpenAI',
      scope,
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o',
        'input.mime_type': 'application/json',
        'output.mime_type': 'application/json',
        ...attributes,
      },
    });
  const expectedRequest = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Weather in Paris?' },
    { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
    { role: 'tool', tool_call_id: 'call_1', content: { temp_c: 14 } },
  ];

  it('reads an LLM span from input.value {"messages": [[...]]} and output.value {"generations": [[...]]} when the flattened keys are absent', () => {
    const step = llmSpan({
      'input.value': j({ messages: [[system, human, callingAi, toolMsg]] }),
      'output.value': j({
        generations: [
          [
            {
              text: 'Rainy, 14 °C.',
              generation_info: { finish_reason: 'stop' },
              type: 'ChatGeneration',
              message: answer,
            },
          ],
        ],
        llm_output: { model_name: 'gpt-4o' },
        run: null,
        type: 'LLMResult',
      }),
    });
    expect(step.request).toEqual(expectedRequest);
    expect(step.response).toEqual([{ role: 'assistant', content: 'Rainy, 14 °C.', finish_reason: 'stop' }]);
  });

  it('reads the same messages from the flattened keys and the bodies, and takes the finish reason the bodies carry', () => {
    const flat = {
      'llm.input_messages.0.message.role': 'system',
      'llm.input_messages.0.message.content': 'Be brief.',
      'llm.input_messages.1.message.role': 'user',
      'llm.input_messages.1.message.content': 'Weather in Paris?',
      'llm.input_messages.2.message.role': 'assistant',
      'llm.input_messages.2.message.tool_calls.0.tool_call.id': 'call_1',
      'llm.input_messages.2.message.tool_calls.0.tool_call.function.name': 'get_weather',
      'llm.input_messages.2.message.tool_calls.0.tool_call.function.arguments': '{"city":"Paris"}',
      'llm.input_messages.3.message.role': 'tool',
      'llm.input_messages.3.message.content': '{"temp_c": 14}',
      'llm.input_messages.3.message.tool_call_id': 'call_1',
      'llm.input_messages.3.message.name': 'get_weather',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'call_2',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
      'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city":"Lyon"}',
    };
    const calling = {
      ...callingAi,
      kwargs: {
        ...callingAi.kwargs,
        additional_kwargs: {
          tool_calls: [
            { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Lyon"}' } },
          ],
        },
        tool_calls: [{ name: 'get_weather', args: { city: 'Lyon' }, id: 'call_2', type: 'tool_call' }],
      },
    };
    const bodies = {
      'input.value': j({ messages: [[system, human, callingAi, toolMsg]] }),
      'output.value': j({
        generations: [
          [{ text: '', generation_info: { finish_reason: 'tool_calls' }, type: 'ChatGeneration', message: calling }],
        ],
        llm_output: null,
        run: null,
        type: 'LLMResult',
      }),
    };
    const answerCall = {
      role: 'assistant',
      tool_calls: [{ id: 'call_2', name: 'get_weather', arguments: { city: 'Lyon' } }],
    };
    expect(llmSpan(flat)).toMatchObject({ request: expectedRequest, response: [answerCall] });
    expect(llmSpan({ ...flat, ...bodies })).toMatchObject({
      request: expectedRequest,
      response: [{ ...answerCall, finish_reason: 'tool_calls' }],
    });
  });

  it('reads Anthropic content blocks of an AIMessage without repeating its tool calls', () => {
    const ai = {
      lc: 1,
      type: 'constructor',
      id: ['langchain_core', 'messages', 'ai', 'AIMessage'],
      kwargs: {
        type: 'ai',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
        ],
        tool_calls: [{ name: 'get_weather', args: { city: 'Paris' }, id: 'toolu_1', type: 'tool_call' }],
        response_metadata: { stop_reason: 'tool_use' },
      },
    };
    const step = llmSpan({
      'input.value': j({ messages: [[human]] }),
      'output.value': j({
        generations: [[{ text: 'Checking.', type: 'ChatGeneration', message: ai }]],
        type: 'LLMResult',
      }),
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: 'Checking.',
        tool_calls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('names the model that answered, from the result, where llm.model_name is the one asked for', () => {
    // LangChain's llm.model_name is the chat model's `model` setting; the answer's
    // response_metadata (model_name: OpenAI, model: Anthropic) or llm_output names what answered
    // (seen live: test/conformance/live-frameworks.test.ts)
    const generation = (meta: object) => ({
      text: 'Rainy, 14 °C.',
      type: 'ChatGeneration',
      message: { ...answer, kwargs: { ...answer.kwargs, response_metadata: meta } },
    });
    const result = (meta: object, llmOutput: object | null = null) =>
      llmSpan({
        'llm.model_name': 'gpt-4o-mini',
        'input.value': j({ messages: [[human]] }),
        'output.value': j({ generations: [[generation(meta)]], llm_output: llmOutput, type: 'LLMResult' }),
      });
    expect(result({ finish_reason: 'stop', model_name: 'gpt-4o-mini-2024-07-18' }).model).toBe(
      'gpt-4o-mini-2024-07-18',
    );
    expect(result({ stop_reason: 'end_turn', model: 'claude-3-5-haiku-20241022' }).model).toBe(
      'claude-3-5-haiku-20241022',
    );
    expect(result({ finish_reason: 'stop' }, { model_name: 'gpt-4o-2024-08-06' }).model).toBe('gpt-4o-2024-08-06');
    expect(result({ finish_reason: 'stop' }).model).toBe('gpt-4o-mini');
  });
});

describe('OpenInference Bedrock tool results with several content blocks', () => {
  // openinference-instrumentation-bedrock _converse_attributes.py get_message_objects: a
  // toolResult's text blocks (and {json} blocks as JSON text) are joined with "\n\n" into one
  // tool message's content; the body's blocks must read the same.
  it('joins the blocks of a toolResult body as the flattened keys do', () => {
    const attrs = { 'openinference.span.kind': 'LLM', 'llm.model_name': 'anthropic.claude-3-haiku' };
    const body = stepOf({
      name: 'bedrock.converse',
      attributes: {
        ...attrs,
        'input.mime_type': 'application/json',
        'input.value': j([
          {
            role: 'user',
            content: [{ toolResult: { toolUseId: 't1', content: [{ text: 'Rainy' }, { text: '14 °C' }] } }],
          },
        ]),
      },
    });
    const flat = stepOf({
      name: 'bedrock.converse',
      attributes: {
        ...attrs,
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.tool_call_id': 't1',
        'llm.input_messages.0.message.content': 'Rainy\n\n14 °C',
      },
    });
    expect(body.request).toEqual([{ role: 'tool', tool_call_id: 't1', content: 'Rainy\n\n14 °C' }]);
    expect(flat.request).toEqual(body.request);
  });
});

describe('Strands Agents (strands-agents 1.x, strands/telemetry/tracer.py: span events)', () => {
  // Each message is an event gen_ai.{role}.message whose `content` is the JSON of its Bedrock
  // Converse content blocks (a user turn holding toolResult blocks is a gen_ai.tool.message);
  // the answer is a gen_ai.choice with `message` (the blocks) and `finish_reason` (raw
  // stopReason). Tool spans: gen_ai.tool.message {role, content: input JSON, id} and
  // gen_ai.choice {message: result blocks, id}; agent spans: the user message and a
  // gen_ai.choice whose message is str(AgentResult), the answer text.
  const scope = 'strands.telemetry.tracer';
  const base = { 'gen_ai.system': 'strands-agents' };

  it('reads a model call: Converse blocks as JSON text, tool uses and tool results in the history', () => {
    const step = stepOf({
      name: 'chat',
      kind: 'client',
      scope,
      attributes: { ...base, 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'us.anthropic.claude-sonnet-4' },
      events: [
        { name: 'gen_ai.system.message', attributes: { content: j([{ text: 'You are helpful.' }]) } },
        { name: 'gen_ai.user.message', attributes: { content: j([{ text: 'Weather in Paris?' }]) } },
        {
          name: 'gen_ai.assistant.message',
          attributes: {
            content: j([{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }]),
          },
        },
        {
          name: 'gen_ai.tool.message',
          attributes: {
            content: j([
              { toolResult: { toolUseId: 'tooluse_1', status: 'success', content: [{ text: 'sunny, 21C' }] } },
            ]),
          },
        },
        {
          name: 'gen_ai.choice',
          attributes: { finish_reason: 'end_turn', message: j([{ text: 'It is sunny in Paris.' }]) },
        },
      ],
    });
    expect(step.layout).toBe('otel-genai-events');
    expect(step.request).toEqual([
      { role: 'system', content: 'You are helpful.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', tool_calls: [{ id: 'tooluse_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'tooluse_1', content: 'sunny, 21C' },
    ]);
    expect(step.response).toEqual([{ role: 'assistant', content: 'It is sunny in Paris.', finish_reason: 'stop' }]);
  });

  it('reads an answer that calls a tool', () => {
    const step = stepOf({
      name: 'chat',
      scope,
      attributes: { ...base, 'gen_ai.operation.name': 'chat' },
      events: [
        {
          name: 'gen_ai.choice',
          attributes: {
            finish_reason: 'tool_use',
            message: j([
              { text: 'Let me check.' },
              { toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } },
            ]),
          },
        },
      ],
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: 'Let me check.',
        finish_reason: 'tool_calls',
        tool_calls: [{ id: 'tooluse_1', name: 'get_weather', arguments: { city: 'Paris' } }],
      },
    ]);
  });

  it('reads a tool execution: the input from gen_ai.tool.message, the result blocks from gen_ai.choice', () => {
    const step = stepOf({
      name: 'execute_tool get_weather',
      scope,
      attributes: {
        ...base,
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.id': 'tooluse_1',
      },
      events: [
        { name: 'gen_ai.tool.message', attributes: { role: 'tool', content: j({ city: 'Paris' }), id: 'tooluse_1' } },
        { name: 'gen_ai.choice', attributes: { message: j([{ text: 'sunny, 21C' }]), id: 'tooluse_1' } },
      ],
    });
    expect([step.kind, step.tool, step.toolCallId, step.layout]).toEqual([
      'tool',
      'get_weather',
      'tooluse_1',
      'otel-genai-events',
    ]);
    expect([step.request, step.response]).toEqual([{ city: 'Paris' }, 'sunny, 21C']);
  });

  it('reads an agent invocation: its input message and its answer text', () => {
    const step = stepOf({
      name: 'invoke_agent Strands Agents',
      scope,
      attributes: { ...base, 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'Strands Agents' },
      events: [
        { name: 'gen_ai.user.message', attributes: { content: j([{ text: 'Weather in Paris?' }]) } },
        { name: 'gen_ai.choice', attributes: { message: 'It is sunny in Paris.\n', finish_reason: 'end_turn' } },
      ],
    });
    expect([step.kind, step.name]).toEqual(['agent', 'Strands Agents']);
    expect(step.request).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
    expect(step.response).toEqual([{ role: 'assistant', content: 'It is sunny in Paris.\n' }]);
  });

  it('keeps an agent answer that is JSON text (a structured answer, a number) as the answer', () => {
    // tracer.py end_agent_span: message = str(response), the final message's text as written
    const answer = (message: string) =>
      stepOf({
        name: 'invoke_agent Strands Agents',
        scope,
        attributes: { ...base, 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'Strands Agents' },
        events: [{ name: 'gen_ai.choice', attributes: { message, finish_reason: 'end_turn' } }],
      }).response;
    expect(answer('{"city": "Paris", "temp_c": 14}')).toEqual([
      { role: 'assistant', content: { city: 'Paris', temp_c: 14 } },
    ]);
    expect(answer('42')).toEqual([{ role: 'assistant', content: '42' }]);
    expect(answer('[1, 2]')).toEqual([{ role: 'assistant', content: [1, 2] }]);
    // a model call's choice: its content blocks as JSON
    expect(answer(j([{ text: 'Rainy.' }]))).toEqual([{ role: 'assistant', content: 'Rainy.' }]);
  });

  it('reads Converse JSON text only in span events: an OpenAI tool result shaped like it stays a list', () => {
    const hits = [
      { text: 'hit1', url: 'u1' },
      { text: 'hit2', url: 'u2' },
    ];
    const step = stepOf({
      name: 'ChatCompletion',
      attributes: {
        'openinference.span.kind': 'LLM',
        'input.mime_type': 'application/json',
        'input.value': j({ messages: [{ role: 'tool', tool_call_id: 'c1', content: j(hits) }] }),
      },
    });
    expect(step.request).toEqual([{ role: 'tool', tool_call_id: 'c1', content: hits }]);
  });

  it('keeps a user text that merely looks like JSON as that JSON, not as content blocks', () => {
    const step = stepOf({
      name: 'chat',
      scope,
      attributes: { ...base, 'gen_ai.operation.name': 'chat' },
      events: [{ name: 'gen_ai.user.message', attributes: { content: j([{ city: 'Paris' }]) } }],
    });
    expect(step.request).toEqual([{ role: 'user', content: [{ city: 'Paris' }] }]);
  });
});

describe('Google ADK (google-adk 1.x, telemetry.py) and Gemini request and response bodies', () => {
  // call_llm spans carry the whole Gemini request and response as JSON in
  // gcp.vertex.agent.llm_request / llm_response (snake-case fields: config.system_instruction,
  // contents[].parts[].function_call / function_response); execute_tool spans the tool's
  // arguments and response in gcp.vertex.agent.tool_call_args / tool_response.
  it('reads a model call from gcp.vertex.agent.llm_request / llm_response', () => {
    const step = stepOf({
      name: 'call_llm',
      scope: 'gcp.vertex.agent',
      attributes: {
        'gen_ai.system': 'gcp.vertex.agent',
        'gen_ai.request.model': 'gemini-2.0-flash',
        'gcp.vertex.agent.session_id': 's-1',
        'gcp.vertex.agent.llm_request': j({
          model: 'gemini-2.0-flash',
          config: { system_instruction: 'Be brief.' },
          contents: [
            { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
            {
              role: 'model',
              parts: [{ function_call: { id: 'adk-1', name: 'get_weather', args: { city: 'Paris' } } }],
            },
            {
              role: 'user',
              parts: [{ function_response: { id: 'adk-1', name: 'get_weather', response: { result: 'sunny' } } }],
            },
          ],
        }),
        'gcp.vertex.agent.llm_response': j({
          content: { role: 'model', parts: [{ text: 'It is sunny.' }] },
          finish_reason: 'STOP',
        }),
      },
    });
    expect([step.kind, step.model]).toEqual(['llm', 'gemini-2.0-flash']);
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', tool_calls: [{ id: 'adk-1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'adk-1', content: { result: 'sunny' } },
    ]);
    expect(step.response).toEqual([{ role: 'assistant', content: 'It is sunny.', finish_reason: 'stop' }]);
    expect(
      normalizeSpan(
        span({ name: 'call_llm', attributes: { 'gen_ai.request.model': 'g', 'gcp.vertex.agent.session_id': 's-1' } }),
      ).ownRun,
    ).toBe('s-1');
  });

  it('reads a tool execution from gcp.vertex.agent.tool_call_args / tool_response', () => {
    const step = stepOf({
      name: 'execute_tool get_weather',
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.call.id': 'adk-1',
        'gcp.vertex.agent.tool_call_args': j({ city: 'Paris' }),
        'gcp.vertex.agent.tool_response': j({ result: 'sunny' }),
      },
    });
    expect([step.request, step.response]).toEqual([{ city: 'Paris' }, { result: 'sunny' }]);
  });

  it('reads a google-genai body in OpenInference input.value / output.value (camelCase, candidates, images)', () => {
    const step = stepOf({
      name: 'GenerateContent',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gemini-2.5-flash',
        'input.mime_type': 'application/json',
        'output.mime_type': 'application/json',
        'input.value': j({
          model: 'gemini-2.5-flash',
          config: { systemInstruction: { parts: [{ text: 'Be brief.' }] } },
          contents: [
            {
              role: 'user',
              parts: [{ text: 'What is this?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }],
            },
          ],
        }),
        'output.value': j({
          candidates: [{ content: { role: 'model', parts: [{ text: 'A cat.' }] }, finishReason: 'MAX_TOKENS' }],
        }),
      },
    });
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: 'iVBORw0KGgo=', mime_type: 'image/png' },
        ],
      },
    ]);
    expect(step.response).toEqual([{ role: 'assistant', content: 'A cat.', finish_reason: 'length' }]);
  });
});

describe('OpenLLMetry (Python) instrumentations beyond the corpus', () => {
  it('reads an openai-agents function span from its GenAI tool keys (no traceloop.entity.*)', () => {
    // opentelemetry-instrumentation-openai-agents _hooks.py, _end_function_span
    const step = stepOf({
      name: 'get_weather.tool',
      scope: 'opentelemetry.instrumentation.openai_agents',
      attributes: {
        'traceloop.span.kind': 'tool',
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
        'gen_ai.tool.type': 'function',
        'gen_ai.tool.call.arguments': '{"city":"Paris"}',
        'gen_ai.tool.call.result': 'Sunny',
        'gen_ai.agent.name': 'Assistant',
      },
    });
    expect(step).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      layout: 'openllmetry',
      request: { city: 'Paris' },
      response: 'Sunny',
    });
  });

  it('folds an Anthropic thinking completion (role "thinking") into the answer as its reasoning', () => {
    // opentelemetry-instrumentation-anthropic span_utils.py _set_span_completions: a thinking
    // block is its own indexed completion, the answer the next one
    const legacy = (completion: Attributes) =>
      stepOf({
        name: 'anthropic.chat',
        kind: 'client',
        scope: 'opentelemetry.instrumentation.anthropic',
        attributes: {
          'llm.request.type': 'chat',
          'gen_ai.system': 'Anthropic',
          'gen_ai.request.model': 'claude-sonnet-4-5',
          'gen_ai.prompt.0.role': 'user',
          'gen_ai.prompt.0.content': 'Weather in Paris?',
          ...completion,
        },
      }).response;
    expect(
      legacy({
        'gen_ai.completion.0.finish_reason': 'tool_use',
        'gen_ai.completion.0.role': 'thinking',
        'gen_ai.completion.0.content': 'I should call the weather tool.',
        'gen_ai.completion.1.role': 'assistant',
        'gen_ai.completion.1.content': 'Let me check.',
        'gen_ai.completion.1.tool_calls.0.id': 'toolu_1',
        'gen_ai.completion.1.tool_calls.0.name': 'get_weather',
        'gen_ai.completion.1.tool_calls.0.arguments': '{"city": "Paris"}',
      }),
    ).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'I should call the weather tool.' },
          { type: 'text', text: 'Let me check.' },
        ],
        tool_calls: [{ id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_calls',
      },
    ]);
    // thinking and no answer after it
    expect(
      legacy({
        'gen_ai.completion.0.finish_reason': 'max_tokens',
        'gen_ai.completion.0.role': 'thinking',
        'gen_ai.completion.0.content': 'Hmm.',
      }),
    ).toEqual([{ role: 'assistant', content: [{ type: 'reasoning', text: 'Hmm.' }], finish_reason: 'length' }]);
  });

  it('reads an OpenAI refusal written in `refusal` instead of `content`', () => {
    // opentelemetry-instrumentation-openai shared/chat_wrappers.py _set_completions
    const step = stepOf({
      name: 'openai.chat',
      kind: 'client',
      scope: 'opentelemetry.instrumentation.openai',
      attributes: {
        'llm.request.type': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'Something disallowed',
        'gen_ai.completion.0.finish_reason': 'stop',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.refusal': "I can't help with that.",
      },
    });
    expect(step.response).toEqual([
      { role: 'assistant', content: [{ type: 'refusal', text: "I can't help with that." }], finish_reason: 'stop' },
    ]);
  });
});

describe('OpenInference CrewAI and LlamaIndex tool spans', () => {
  it('reads a CrewAI tool use: the parsed call arguments, not the agent action around them', () => {
    // openinference-instrumentation-crewai _wrappers.py, ToolUsage._use
    const step = stepOf({
      name: 'Search the internet._use',
      scope: 'openinference.instrumentation.crewai',
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'Search the internet',
        'input.value': j({
          tool_string: 'Action: Search the internet\nAction Input: {"search_query": "AI news"}',
          tool: "CrewStructuredTool(name='Search the internet')",
          calling: { tool_name: 'Search the internet', arguments: { search_query: 'AI news' } },
        }),
        'output.value': 'Result 1: ...',
        'output.mime_type': 'text/plain',
      },
    });
    expect(step).toMatchObject({
      kind: 'tool',
      tool: 'Search the internet',
      request: { search_query: 'AI news' },
      response: 'Result 1: ...',
    });
  });

  it("reads a LlamaIndex tool call: its keyword arguments and the ToolOutput's raw output", () => {
    // openinference-instrumentation-llama-index _handler.py: bound arguments in, ToolOutput out
    const step = stepOf({
      name: 'FunctionTool.acall',
      scope: 'openinference.instrumentation.llama_index',
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'multiply',
        'input.value': j({ kwargs: { a: 2, b: 3 } }),
        'input.mime_type': 'application/json',
        'output.value': j({
          content: '6',
          tool_name: 'multiply',
          raw_input: { args: [], kwargs: { a: 2, b: 3 } },
          raw_output: 6,
          is_error: false,
        }),
        'output.mime_type': 'application/json',
      },
    });
    expect(step).toMatchObject({ kind: 'tool', tool: 'multiply', request: { a: 2, b: 3 }, response: 6 });
  });

  it("leaves LlamaIndex's model metadata out of a model call's params", () => {
    const step = stepOf({
      name: 'OpenAI.achat',
      scope: 'openinference.instrumentation.llama_index',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-4o',
        'llm.invocation_parameters': j({
          context_window: 128000,
          num_output: -1,
          is_chat_model: true,
          is_function_calling_model: true,
          model_name: 'gpt-4o',
          system_role: 'system',
          temperature: 0.1,
        }),
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'Hi',
      },
    });
    expect(step.params).toEqual({ temperature: 0.1 });
  });
});

describe('OpenInference openai-agents: OpenAI Responses API bodies', () => {
  // openinference-instrumentation-openai-agents _processor.py: a response span's input.value is
  // the input item list, output.value the Response, llm.invocation_parameters the Response
  // minus tools/usage/output (so its instructions); the flattened keys give each function call
  // a message of its own and no finish reason.
  const scope = 'openinference.instrumentation.openai_agents';
  const responseSpan = (attributes: Attributes) =>
    stepOf({
      name: 'response',
      scope,
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.system': 'openai',
        'llm.model_name': 'gpt-4o',
        ...attributes,
      },
    });
  const flatCall = (prefix: string, id: string, name: string, args: string) => ({
    [`${prefix}.message.role`]: 'assistant',
    [`${prefix}.message.tool_calls.0.tool_call.id`]: id,
    [`${prefix}.message.tool_calls.0.tool_call.function.name`]: name,
    [`${prefix}.message.tool_calls.0.tool_call.function.arguments`]: args,
  });

  it('reads one answer with its text and its calls, and how it ended, from the Response', () => {
    const output = {
      id: 'resp_1',
      object: 'response',
      model: 'gpt-4o',
      status: 'completed',
      output: [
        { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Two lookups.' }] },
        {
          type: 'message',
          id: 'msg_1',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: 'Let me check.', annotations: [] }],
        },
        {
          type: 'function_call',
          id: 'fc_1',
          call_id: 'call_1',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
          status: 'completed',
        },
        {
          type: 'function_call',
          id: 'fc_2',
          call_id: 'call_2',
          name: 'get_time',
          arguments: '{}',
          status: 'completed',
        },
      ],
    };
    const step = responseSpan({
      'input.value': j([{ role: 'user', content: 'Weather and time in Paris?' }]),
      'input.mime_type': 'application/json',
      'output.value': j(output),
      'output.mime_type': 'application/json',
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.contents.0.message_content.type': 'text',
      'llm.output_messages.0.message.contents.0.message_content.text': 'Let me check.',
      ...flatCall('llm.output_messages.1', 'call_1', 'get_weather', '{"city":"Paris"}'),
      ...flatCall('llm.output_messages.2', 'call_2', 'get_time', '{}'),
      'llm.invocation_parameters': j({
        id: 'resp_1',
        object: 'response',
        created_at: 1,
        instructions: 'Be brief.',
        model: 'gpt-4o',
        temperature: 0.2,
        status: 'completed',
      }),
    });
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather and time in Paris?' },
    ]);
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Two lookups.' },
          { type: 'text', text: 'Let me check.' },
        ],
        tool_calls: [
          { id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } },
          { id: 'call_2', name: 'get_time', arguments: {} },
        ],
        finish_reason: 'tool_calls',
      },
    ]);
    expect(step.params).toEqual({ model: 'gpt-4o', temperature: 0.2 }); // not the Response's id, time, status
    const cut = responseSpan({
      'output.value': j({
        ...output,
        status: 'incomplete',
        incomplete_details: { reason: 'max_output_tokens' },
        output: [output.output[1]],
      }),
      'output.mime_type': 'application/json',
    });
    expect(cut.response).toEqual([{ role: 'assistant', content: 'Let me check.', finish_reason: 'length' }]);
  });

  it("reads a turn's parallel calls in the input items as one assistant message, each output a tool message", () => {
    const step = responseSpan({
      'input.mime_type': 'application/json',
      'input.value': j([
        { role: 'user', content: [{ type: 'input_text', text: 'Weather and time?' }] },
        {
          type: 'function_call',
          call_id: 'call_1',
          name: 'get_weather',
          arguments: '{"city":"Paris"}',
          id: 'fc_1',
          status: 'completed',
        },
        {
          type: 'function_call',
          call_id: 'call_2',
          name: 'get_time',
          arguments: '{}',
          id: 'fc_2',
          status: 'completed',
        },
        { type: 'function_call_output', call_id: 'call_1', output: '{"temp": 22}' },
        { type: 'function_call_output', call_id: 'call_2', output: '12:00' },
      ]),
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.contents.0.message_content.type': 'text',
      'llm.input_messages.0.message.contents.0.message_content.text': 'Weather and time?',
      ...flatCall('llm.input_messages.1', 'call_1', 'get_weather', '{"city":"Paris"}'),
      ...flatCall('llm.input_messages.2', 'call_2', 'get_time', '{}'),
      'llm.input_messages.3.message.role': 'tool',
      'llm.input_messages.3.message.tool_call_id': 'call_1',
      'llm.input_messages.3.message.content': '{"temp": 22}',
      'llm.input_messages.4.message.role': 'tool',
      'llm.input_messages.4.message.tool_call_id': 'call_2',
      'llm.input_messages.4.message.content': '12:00',
    });
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather and time?' },
      {
        role: 'assistant',
        tool_calls: [
          { id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } },
          { id: 'call_2', name: 'get_time', arguments: {} },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: { temp: 22 } },
      { role: 'tool', tool_call_id: 'call_2', content: '12:00' },
    ]);
  });

  it('reads a prompt given as text', () => {
    expect(responseSpan({ 'input.value': 'Weather in Paris?' }).request).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
    ]);
  });
});

describe('OpenInference CrewAI task spans', () => {
  it("answers with the TaskOutput's raw text, not the whole TaskOutput", () => {
    // openinference-instrumentation-crewai _wrappers.py: Task._execute_core's output is TaskOutput.model_dump()
    const step = stepOf({
      name: 'Researcher._execute_core',
      scope: 'openinference.instrumentation.crewai',
      attributes: {
        'openinference.span.kind': 'AGENT',
        'input.value': j({ agent: 'Agent(role=Researcher)', context: '', tools: [] }),
        'input.mime_type': 'application/json',
        'output.value': j({
          description: 'Find AI news',
          name: null,
          expected_output: 'A list',
          summary: 'Find AI news...',
          raw: '1. GPT-5 released',
          pydantic: null,
          json_dict: null,
          agent: 'Researcher',
          output_format: 'raw',
        }),
        'output.mime_type': 'application/json',
      },
    });
    expect(step).toMatchObject({ kind: 'agent', response: [{ role: 'assistant', content: '1. GPT-5 released' }] });
  });
});

describe('Semantic Kernel (model_diagnostics: Python decorators.py, .NET ModelDiagnostics.cs)', () => {
  const call = [
    { id: 'call_1', type: 'function', function: { name: 'Weather-get_weather', arguments: '{"city": "Paris"}' } },
  ];

  it('reads its chat.completions operations as model calls, content in log records (Python)', () => {
    const chat = span({
      name: 'chat.completions gpt-4o',
      id: 'sk',
      scope: 'semantic_kernel.utils.telemetry.model_diagnostics.decorators',
      attributes: {
        'gen_ai.operation.name': 'chat.completions',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.finish_reason': 'FinishReason.TOOL_CALLS',
      },
    });
    const logs = [
      log('sk', 'gen_ai.user.message', j({ role: 'user', content: 'Weather in Paris?' })),
      log('sk', 'gen_ai.choice', j({ message: { role: 'assistant', tool_calls: call } })),
    ];
    const step = normalizeSpan(chat, logs).step as StepDraft;
    expect(step.kind).toBe('llm');
    expect(step.request).toEqual([{ role: 'user', content: 'Weather in Paris?' }]);
    expect(step.response).toEqual([
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_1', name: 'Weather-get_weather', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_calls',
      },
    ]);
    for (const op of ['chat.streaming_completions', 'text.completions', 'text.streaming_completions']) {
      expect(
        stepOf({ name: `${op} gpt-4o`, attributes: { 'gen_ai.operation.name': op, 'gen_ai.request.model': 'gpt-4o' } })
          .kind,
      ).toBe('llm');
    }
  });

  it('reads .NET span events (gen_ai.event.content) and its enum finish reasons', () => {
    const step = stepOf({
      name: 'chat.completions gpt-4o',
      scope: 'Microsoft.SemanticKernel.Diagnostics',
      attributes: {
        'gen_ai.operation.name': 'chat.completions',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.response.finish_reason': '["ToolCalls"]',
      },
      events: [
        {
          name: 'gen_ai.user.message',
          attributes: { 'gen_ai.event.content': j({ role: 'user', content: 'Weather in Paris?' }) },
        },
        {
          name: 'gen_ai.choice',
          attributes: {
            'gen_ai.event.content': j({
              index: 0,
              message: { role: 'assistant', content: null, tool_calls: call },
              finish_reason: 'ToolCalls',
            }),
          },
        },
      ],
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_1', name: 'Weather-get_weather', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('reads text completions: the prompt and the answer recorded as text alone', () => {
    const expected = [
      [{ role: 'user', content: 'Say hi' }],
      [{ role: 'assistant', content: 'hi', finish_reason: 'stop' }],
    ];
    // .NET: span events whose gen_ai.event.content is the text, and a choice whose message is the text
    const dotnet = stepOf({
      name: 'text.completions gpt-3.5',
      attributes: { 'gen_ai.operation.name': 'text.completions', 'gen_ai.request.model': 'gpt-3.5' },
      events: [
        { name: 'gen_ai.user.message', attributes: { 'gen_ai.event.content': 'Say hi' } },
        {
          name: 'gen_ai.choice',
          attributes: { 'gen_ai.event.content': j({ index: 0, message: 'hi', finish_reason: 'Stop' }) },
        },
      ],
    });
    expect([dotnet.request, dotnet.response]).toEqual(expected);
    // Python: a gen_ai.prompt record holding the prompt, the choice's message a TextContent
    const text = span({
      name: 'text.completions gpt-3.5',
      id: 'skt',
      attributes: { 'gen_ai.operation.name': 'text.completions', 'gen_ai.request.model': 'gpt-3.5' },
    });
    const python = normalizeSpan(text, [
      log('skt', 'gen_ai.prompt', 'Say hi'),
      log('skt', 'gen_ai.choice', j({ index: 0, message: { text: 'hi', inner_content: null }, finish_reason: 'stop' })),
    ]).step as StepDraft;
    expect([python.request, python.response]).toEqual(expected);
  });
});

describe('LiteLLM OpenTelemetry callback (litellm/integrations/opentelemetry.py)', () => {
  const call = [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } }];
  const litellm = (callType: string, attributes: Attributes) =>
    stepOf({
      name: 'litellm_request',
      scope: 'litellm',
      attributes: {
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.system': 'openai',
        'llm.request.type': callType,
        // the operation is "chat" for completion, else the call type itself
        'gen_ai.operation.name': callType === 'completion' ? 'chat' : callType,
        ...attributes,
      },
    });

  it('reads async and proxy calls (acompletion) as model calls, and tool calls kept on the message beside its parts', () => {
    for (const callType of ['completion', 'acompletion']) {
      const step = litellm(callType, {
        'gen_ai.input.messages': j([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }]),
        'gen_ai.output.messages': j([{ role: 'assistant', parts: [], tool_calls: call, finish_reason: 'tool_calls' }]),
      });
      expect(step.kind).toBe('llm');
      expect(step.response).toEqual([
        {
          role: 'assistant',
          tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
          finish_reason: 'tool_calls',
        },
      ]);
    }
    const next = litellm('acompletion', {
      'gen_ai.input.messages': j([
        { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
        { role: 'assistant', parts: [], tool_calls: call },
        { role: 'tool', parts: [{ type: 'text', content: '14C' }], tool_call_id: 'call_1' },
      ]),
    });
    expect(next.request).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: '14C' },
    ]);
    expect(litellm('aembedding', {})).toBeNull();
  });
});

describe('OpenInference google-genai with Content objects in the request', () => {
  it('reads the flattened messages when the body holds the objects as Python repr text', () => {
    // openinference-instrumentation-google-genai: json.dumps(default=str) of types.Content objects
    const step = stepOf({
      name: 'GenerateContent',
      scope: 'openinference.instrumentation.google_genai',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.provider': 'google',
        'llm.model_name': 'gemini-2.0-flash',
        'input.mime_type': 'application/json',
        'input.value': j({
          model: 'gemini-2.0-flash',
          contents: [
            "parts=[Part(\n  text='Weather in Paris?'\n)] role='user'",
            "parts=[Part(\n  text='It is 14C.'\n)] role='model'",
            "parts=[Part(\n  text='And Lyon?'\n)] role='user'",
          ],
        }),
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'Weather in Paris?',
        'llm.input_messages.1.message.role': 'model',
        'llm.input_messages.1.message.content': 'It is 14C.',
        'llm.input_messages.2.message.role': 'user',
        'llm.input_messages.2.message.content': 'And Lyon?',
      },
    });
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', content: 'It is 14C.' },
      { role: 'user', content: 'And Lyon?' },
    ]);
    expect(step.params).toEqual({ model: 'gemini-2.0-flash' });
  });
});

describe('OpenInference Bedrock Agents (openinference-instrumentation-bedrock _attribute_extractor.py)', () => {
  const scope = 'openinference.instrumentation.bedrock';
  it("reads a model step's raw answer (labelled text/plain) as one message with its call; a tool_use block is the assistant's call", () => {
    const raw = {
      id: 'msg_1',
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'text', text: 'I will check.' },
        { type: 'tool_use', id: 'toolu_1', name: 'WeatherGroup__get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
    };
    const flatOutput = {
      'llm.output_messages.0.message.role': 'assistant',
      'llm.output_messages.0.message.content': 'I will check.',
      'llm.output_messages.1.message.role': 'tool',
      'llm.output_messages.1.message.tool_call_id': 'toolu_1',
      'llm.output_messages.1.message.tool_calls.0.tool_call.id': 'toolu_1',
      'llm.output_messages.1.message.tool_calls.0.tool_call.function.name': 'WeatherGroup__get_weather',
      'llm.output_messages.1.message.tool_calls.0.tool_call.function.arguments': '{"city": "Paris"}',
    };
    const base = {
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'claude-3-5-sonnet',
      'llm.input_messages.0.message.role': 'user',
      'llm.input_messages.0.message.content': 'Weather in Paris?',
    };
    const call = { id: 'toolu_1', name: 'WeatherGroup__get_weather', arguments: { city: 'Paris' } };
    const withBody = stepOf({
      name: 'LLM',
      scope,
      attributes: { ...base, ...flatOutput, 'output.value': j(raw), 'output.mime_type': 'text/plain' },
    });
    expect(withBody.response).toEqual([
      { role: 'assistant', content: 'I will check.', tool_calls: [call], finish_reason: 'tool_calls' },
    ]);
    const flatOnly = stepOf({ name: 'LLM', scope, attributes: { ...base, ...flatOutput } });
    expect(flatOnly.response).toEqual([
      { role: 'assistant', content: 'I will check.' },
      { role: 'assistant', tool_calls: [call] },
    ]);
  });

  it("reads an action group's arguments from its flattened call when it has no input.value", () => {
    const params = j([{ name: 'city', type: 'string', value: 'Paris' }]);
    const step = stepOf({
      name: 'get_weather',
      scope,
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'get_weather',
        'tool.parameters': params,
        'llm.input_messages.0.message.role': 'tool',
        'llm.input_messages.0.message.tool_call_id': 'default',
        'llm.input_messages.0.message.tool_calls.0.tool_call.id': 'default',
        'llm.input_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
        'llm.input_messages.0.message.tool_calls.0.tool_call.function.arguments': params,
        'output.value': '{"temp": 14}',
        'output.mime_type': 'text/plain',
      },
    });
    expect(step).toMatchObject({ kind: 'tool', request: { city: 'Paris' }, response: { temp: 14 } });
  });
});

describe('Logfire OpenAI instrumentation before the GenAI message keys (request_data / response_data)', () => {
  const scope = 'logfire.openai';
  it('reads the request body and the answer; a streamed call is its `streaming response` span, not the call span', () => {
    const request = {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
      ],
      model: 'gpt-4o',
    };
    const step = stepOf({
      name: "Chat Completion with 'gpt-4o'",
      scope,
      attributes: {
        'logfire.msg_template': 'Chat Completion with {request_data[model]!r}',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
        request_data: j(request),
        response_data: j({
          message: {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
          },
          usage: { prompt_tokens: 50 },
        }),
      },
    });
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
    ]);
    expect(step.response).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
    ]);
    const streamed = { ...request, stream: true };
    expect(
      normalizeSpan(
        span({
          name: "Chat Completion with 'gpt-4o'",
          scope,
          attributes: {
            'logfire.msg_template': 'Chat Completion with {request_data[model]!r}',
            'gen_ai.request.model': 'gpt-4o',
            request_data: j(streamed),
          },
        }),
      ).step,
    ).toBeNull();
    const log = stepOf({
      name: "streaming response from 'gpt-4o' took 1.20s",
      scope,
      attributes: {
        'logfire.msg_template': 'streaming response from {request_data[model]!r} took {duration:.2f}s',
        'gen_ai.request.model': 'gpt-4o',
        request_data: j(streamed),
        response_data: j({ combined_chunk_content: 'Rainy.', chunk_count: 3 }),
      },
    });
    expect([log.kind, log.response]).toEqual(['llm', [{ role: 'assistant', content: 'Rainy.' }]]);
  });
});

describe("rules for one library that must not catch another's spans", () => {
  it('takes a span with an agent_name for a pydantic-ai run only by its name or its end keys, and reads GenAI messages when it has them', () => {
    // a user's own Logfire span: logfire.span('handling {agent_name}', agent_name=...)
    expect(
      normalizeSpan(
        span({ name: 'handling support', attributes: { agent_name: 'support', 'logfire.msg': 'handling support' } }),
      ).step,
    ).toBeNull();
    const step = stepOf({
      name: 'invoke_agent planner',
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'planner',
        agent_name: 'planner',
        'gen_ai.input.messages': j([{ role: 'user', parts: [{ type: 'text', content: 'Plan a trip' }] }]),
      },
    });
    expect(step.request).toEqual([{ role: 'user', content: 'Plan a trip' }]);
  });

  it('reads a Semantic Kernel finish reason written as a JSON list or joined with commas', () => {
    const answer = (reason: string) =>
      stepOf({
        name: 'chat.completions gpt-4o',
        attributes: {
          'gen_ai.operation.name': 'chat.completions',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.finish_reason': reason,
        },
        events: [
          {
            name: 'gen_ai.choice',
            attributes: { 'gen_ai.event.content': j({ index: 0, message: { role: 'assistant', content: 'Hi.' } }) },
          },
        ],
      }).response;
    expect(answer('["Stop"]')).toEqual([{ role: 'assistant', content: 'Hi.', finish_reason: 'stop' }]);
    expect(answer('FinishReason.STOP,FinishReason.STOP')).toEqual([
      { role: 'assistant', content: 'Hi.', finish_reason: 'stop' },
    ]);
    expect(answer('N/A')).toEqual([{ role: 'assistant', content: 'Hi.' }]);
  });

  it('counts a call once when a GenAI message has it both as a tool_call part and in tool_calls', () => {
    const step = stepOf({
      name: 'litellm_request',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.output.messages': j([
          {
            role: 'assistant',
            parts: [{ type: 'tool_call', id: 'call_1', name: 'w', arguments: { city: 'Paris' } }],
            tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"city": "Paris"}' } }],
            finish_reason: 'tool_calls',
          },
        ]),
      },
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_1', name: 'w', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it('reads a Gemini request whose text merely mentions Part(...)', () => {
    const step = stepOf({
      name: 'GenerateContent',
      scope: 'openinference.instrumentation.google_genai',
      attributes: {
        'openinference.span.kind': 'LLM',
        'input.mime_type': 'application/json',
        'input.value': j({ model: 'gemini-2.0-flash', contents: ['Explain Part(a) of the exam'] }),
      },
    });
    expect(step.request).toEqual([{ role: 'user', content: 'Explain Part(a) of the exam' }]);
  });

  it("does not take OpenInference's __REDACTED__ input for a prompt", () => {
    const step = stepOf({
      name: 'ChatCompletion',
      attributes: { 'openinference.span.kind': 'LLM', 'input.value': '__REDACTED__', 'output.value': '__REDACTED__' },
    });
    expect([step.request, step.response]).toEqual([null, null]);
  });
});

describe('OpenLLMetry LangChain callback and Anthropic instrumentation quirks (span_utils.py)', () => {
  const legacy = (attributes: Attributes) =>
    stepOf({
      name: 'ChatOpenAI.chat',
      kind: 'client',
      scope: 'opentelemetry.instrumentation.langchain',
      attributes: {
        'llm.request.type': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'Weather in Paris?',
        ...attributes,
      },
    });
  it("drops the '\"\"' a tool-call answer's empty text is written as", () => {
    const step = legacy({
      'gen_ai.completion.0.role': 'assistant',
      'gen_ai.completion.0.content': '""',
      'gen_ai.completion.0.finish_reason': 'tool_calls',
      'gen_ai.completion.0.tool_calls.0.id': 'call_1',
      'gen_ai.completion.0.tool_calls.0.name': 'w',
      'gen_ai.completion.0.tool_calls.0.arguments': '{"city": "Paris"}',
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        tool_calls: [{ id: 'call_1', name: 'w', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_calls',
      },
    ]);
  });

  it("counts a tool_use block kept in the content and copied into tool_calls once; an `unknown` message with calls is the assistant's", () => {
    const step = legacy({
      'gen_ai.prompt.1.role': 'assistant',
      'gen_ai.prompt.1.content': j([
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_1', name: 'w', input: { city: 'Paris' } },
      ]),
      'gen_ai.prompt.1.tool_calls.0.id': 'toolu_1',
      'gen_ai.prompt.1.tool_calls.0.name': 'w',
      'gen_ai.prompt.1.tool_calls.0.arguments': '{"city": "Paris"}',
      'gen_ai.prompt.2.role': 'unknown',
      'gen_ai.prompt.2.tool_calls.0.id': 'toolu_2',
      'gen_ai.prompt.2.tool_calls.0.name': 'w',
      'gen_ai.prompt.2.tool_calls.0.arguments': '{}',
    });
    expect((step.request as { tool_calls?: unknown[] }[])[1]).toEqual({
      role: 'assistant',
      content: 'Checking.',
      tool_calls: [{ id: 'toolu_1', name: 'w', arguments: { city: 'Paris' } }],
    });
    expect((step.request as unknown[])[2]).toEqual({
      role: 'assistant',
      tool_calls: [{ id: 'toolu_2', name: 'w', arguments: {} }],
    });
  });
});

describe('GenAI messages beyond the part types of the conventions', () => {
  it('reads a function_call part (OpenLLMetry google-generativeai) as a tool call', () => {
    const step = stepOf({
      name: 'gemini.generate_content',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gemini-2.0-flash',
        'gen_ai.output.messages': j([
          {
            role: 'assistant',
            parts: [{ type: 'function_call', name: 'get_weather', arguments: { city: 'Paris' } }],
            finish_reason: 'stop',
          },
        ]),
      },
    });
    expect(step.response).toEqual([
      { role: 'assistant', tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }], finish_reason: 'stop' },
    ]);
  });

  it('reads a message with a content list and no parts as the provider message it is (Mastra passes AI SDK messages on)', () => {
    const step = stepOf({
      name: 'chat gpt-4o',
      scope: '@mastra/otel-exporter',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.input.messages': j([
          { role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] },
          {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: 'Look it up.' },
              { type: 'tool-call', toolCallId: 'c1', toolName: 'w', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'tool',
            content: [
              { type: 'tool-result', toolCallId: 'c1', toolName: 'w', output: { type: 'json', value: { t: 14 } } },
            ],
          },
        ]),
      },
    });
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      {
        role: 'assistant',
        content: [{ type: 'reasoning', text: 'Look it up.' }],
        tool_calls: [{ id: 'c1', name: 'w', arguments: { city: 'Paris' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: { t: 14 } },
    ]);
  });

  it("reads a Mastra agent run's input and answer (mastra.agent_run.*)", () => {
    const step = stepOf({
      name: 'invoke_agent weather',
      scope: '@mastra/otel-exporter',
      attributes: {
        'gen_ai.operation.name': 'invoke_agent',
        'gen_ai.agent.name': 'weather',
        'gen_ai.system_instructions': 'Be brief.',
        'mastra.agent_run.input': j([{ role: 'user', content: 'Weather in Paris?' }]),
        'mastra.agent_run.output': j({ text: 'Rainy.', files: [] }),
      },
    });
    expect([step.request, step.response, step.params.instructions]).toEqual([
      [{ role: 'user', content: 'Weather in Paris?' }],
      [{ role: 'assistant', content: 'Rainy.' }],
      [{ role: 'system', content: 'Be brief.' }],
    ]);
  });
});

describe('Mastra telemetry before AI tracing (@mastra/core telemetry decorators)', () => {
  // packages/core/src/telemetry/telemetry.decorators.ts (withSpan, InstrumentClass): a span per
  // traced method, `{span}.argument.{i}` and `{span}.result` as JSON strings, componentName the
  // agent's name; packages/core/src/agent/index.ts: @InstrumentClass({ prefix: 'agent', … }).
  const agentSpan = (name: string, attributes: Attributes) =>
    span({
      name,
      scope: 'weather-service',
      attributes: {
        componentName: 'weather',
        runId: 'run-1',
        threadId: 't-1',
        resourceId: 'r-1',
        ...attributes,
      },
    });

  it("reads agent.generate as an agent step: the input text and the result's text", () => {
    const step = normalizeSpan(
      agentSpan('agent.generate', {
        'agent.generate.argument.0': j('Weather in Paris?'),
        'agent.generate.argument.1': j({ maxSteps: 3 }),
        'agent.generate.result': j({
          text: 'Rainy.',
          finishReason: 'stop',
          toolCalls: [],
          usage: { promptTokens: 9, completionTokens: 2 },
        }),
      }),
    ).step as StepDraft;
    expect([step.kind, step.name, step.request, step.response]).toEqual([
      'agent',
      'weather',
      [{ role: 'user', content: 'Weather in Paris?' }],
      [{ role: 'assistant', content: 'Rainy.' }],
    ]);
    // The Agent's other instrumented methods are context, not runs.
    expect(
      normalizeSpan(
        agentSpan('agent.getMemory', { 'agent.getMemory.argument.0': j({}), 'agent.getMemory.result': j(null) }),
      ).step,
    ).toBeNull();
  });

  it("reads agent.stream's messages and the text its onFinish recorded", () => {
    const step = normalizeSpan(
      agentSpan('agent.stream', {
        'agent.stream.argument.0': j([{ role: 'user', content: [{ type: 'text', text: 'Weather in Paris?' }] }]),
        'agent.stream.result': j({
          text: 'Rainy.',
          usage: { inputTokens: 9, outputTokens: 2 },
          finishReason: 'stop',
          toolCalls: [],
          toolResults: [],
        }),
      }),
    ).step as StepDraft;
    expect([step.kind, step.request, step.response]).toEqual([
      'agent',
      [{ role: 'user', content: 'Weather in Paris?' }],
      [{ role: 'assistant', content: 'Rainy.' }],
    ]);
  });

  it('reads a traced tool executor (tool.{key}, toolName) as a tool step', () => {
    // packages/core/src/mastra/index.ts (first releases): telemetry.traceMethod(executor,
    // { spanName: `tool.${key}`, attributes: { toolName: key } }); telemetry.ts traceMethod
    // records the arguments and result the same way.
    const step = stepOf({
      name: 'tool.getWeather',
      attributes: {
        toolName: 'getWeather',
        componentName: 'weather',
        'tool.getWeather.argument.0': j({ city: 'Paris' }),
        'tool.getWeather.result': j({ temperature: 14 }),
      },
    });
    expect([step.kind, step.tool, step.request, step.response]).toEqual([
      'tool',
      'getWeather',
      { city: 'Paris' },
      { temperature: 14 },
    ]);
  });
});

describe('Vercel AI SDK 5+ reasoning', () => {
  it("puts ai.response.reasoning before the answer's text", () => {
    const step = stepOf({
      name: 'ai.generateText.doGenerate',
      attributes: {
        'ai.operationId': 'ai.generateText.doGenerate',
        'ai.model.id': 'o4-mini',
        'ai.prompt.messages': j([{ role: 'user', content: [{ type: 'text', text: 'Why?' }] }]),
        'ai.response.text': 'Because.',
        'ai.response.reasoning': 'Think first.',
        'ai.response.finishReason': 'stop',
      },
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Think first.' },
          { type: 'text', text: 'Because.' },
        ],
        finish_reason: 'stop',
      },
    ]);
  });
});

describe('OpenLLMetry (Python) beyond its indexed keys', () => {
  const eventLog = (forSpan: string, name: string, body: LogRecord['body']): LogRecord => ({
    ...log(forSpan, name, body),
    eventName: name,
    attributes: { 'gen_ai.provider.name': 'openai' },
  });
  const call = [{ id: 'call_1', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, type: 'function' }];

  it("reads the GenAI events it emits with use_legacy_attributes=False, the choice's tool_calls beside its message", () => {
    // opentelemetry-instrumentation-openai shared/event_emitter.py
    const chat = span({
      name: 'openai.chat',
      id: 'ev',
      kind: 'client',
      scope: 'opentelemetry.instrumentation.openai.v1',
      attributes: {
        'llm.request.type': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o',
      },
    });
    const step = normalizeSpan(chat, [
      eventLog('ev', 'gen_ai.user.message', { content: 'Weather in Paris?' }),
      eventLog('ev', 'gen_ai.assistant.message', { content: null, tool_calls: call }),
      eventLog('ev', 'gen_ai.tool.message', { content: 'Sunny' }),
      eventLog('ev', 'gen_ai.choice', {
        index: 0,
        message: { content: null },
        finish_reason: 'tool_calls',
        tool_calls: call,
      }),
    ]).step as StepDraft;
    const asked = { id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } };
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', tool_calls: [asked] },
      { role: 'tool', content: 'Sunny' },
    ]);
    expect(step.response).toEqual([{ role: 'assistant', tool_calls: [asked], finish_reason: 'tool_calls' }]);
  });

  const legacy = (attributes: Attributes) =>
    stepOf({
      name: 'bedrock.completion',
      kind: 'client',
      scope: 'opentelemetry.instrumentation.bedrock',
      attributes: { 'gen_ai.request.model': 'm', ...attributes },
    });

  it("reads a prompt written under its role's name (gen_ai.prompt.0.user / .0.system)", () => {
    const step = legacy({
      'llm.request.type': 'completion',
      'gen_ai.prompt.0.system': 'Be brief.',
      'gen_ai.prompt.1.user': 'Tell me a joke',
      'gen_ai.completion.0.content': 'No.',
    });
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Tell me a joke' },
    ]);
  });

  it('reads Bedrock Converse blocks in the indexed content as calls and results', () => {
    // opentelemetry-instrumentation-bedrock span_utils.py set_converse_input_prompt_span_attributes
    const step = legacy({
      'llm.request.type': 'chat',
      'gen_ai.prompt.0.role': 'user',
      'gen_ai.prompt.0.content': j([{ text: 'Weather?' }]),
      'gen_ai.prompt.1.role': 'assistant',
      'gen_ai.prompt.1.content': j([{ toolUse: { toolUseId: 'tu_1', name: 'get_weather', input: { city: 'Paris' } } }]),
      'gen_ai.prompt.2.role': 'user',
      'gen_ai.prompt.2.content': j([{ toolResult: { toolUseId: 'tu_1', content: [{ text: 'Sunny' }] } }]),
    });
    expect(step.request).toEqual([
      { role: 'user', content: 'Weather?' },
      { role: 'assistant', tool_calls: [{ id: 'tu_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'tu_1', content: 'Sunny' },
    ]);
  });

  it("reads the Responses API wrapper's reasoning summaries, and a FastMCP tool's arguments", () => {
    const step = stepOf({
      name: 'openai.response',
      kind: 'client',
      scope: 'opentelemetry.instrumentation.openai.v1',
      attributes: {
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'o4-mini',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': 'Why?',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.content': 'Because.',
        'gen_ai.completion.0.reasoning': j([{ type: 'summary_text', text: 'Think first.' }]),
      },
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'Think first.' },
          { type: 'text', text: 'Because.' },
        ],
      },
    ]);
    // opentelemetry-instrumentation-mcp fastmcp_instrumentation.py
    const tool = stepOf({
      name: 'get_weather.tool',
      scope: 'opentelemetry.instrumentation.mcp',
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.name': 'get_weather',
        'traceloop.entity.input': j({ tool_name: 'get_weather', arguments: { city: 'Paris' } }),
        'traceloop.entity.output': j([{ type: 'text', content: 'Sunny' }]),
      },
    });
    expect([tool.request, tool.response]).toEqual([{ city: 'Paris' }, 'Sunny']);
  });
});

describe('OTel contrib openai-agents (opentelemetry-instrumentation-openai-agents-v2)', () => {
  it('reads tool_call parts named by tool_name / tool_call_id', () => {
    const step = stepOf({
      name: 'chat gpt-4o',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.output.messages': j([
          {
            role: 'assistant',
            parts: [
              { type: 'tool_call', tool_name: 'get_weather', tool_call_id: 'call_1', arguments: '{"city":"Paris"}' },
            ],
          },
        ]),
      },
    });
    expect(step.response).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
    ]);
  });
});

describe('OTel contrib google-genai and vertexai (opentelemetry-python-contrib instrumentation-genai), event mode', () => {
  const event = (forSpan: string, name: string, body: LogRecord['body']): LogRecord => ({
    ...log(forSpan, name, body),
    eventName: name,
    attributes: { 'gen_ai.system': 'gemini' },
  });
  const chat = (id: string) =>
    span({
      name: 'generate_content gemini-2.0-flash',
      id,
      kind: 'client',
      attributes: {
        'gen_ai.operation.name': 'generate_content',
        'gen_ai.system': 'gemini',
        'gen_ai.request.model': 'gemini-2.0-flash',
      },
    });
  const call = { name: 'get_weather', arguments: { location: 'Boston' } };

  it('reads Gemini Contents in the events: every history entry is a user message event, the Content says whose turn it was', () => {
    const step = normalizeSpan(chat('gg'), [
      event('gg', 'gen_ai.system.message', { content: 'Be brief.' }),
      event('gg', 'gen_ai.user.message', { content: { parts: [{ text: 'Weather in Boston?' }], role: 'user' } }),
      event('gg', 'gen_ai.user.message', {
        content: { parts: [{ function_call: { name: 'get_weather', args: { location: 'Boston' } } }], role: 'model' },
      }),
      event('gg', 'gen_ai.user.message', {
        content: {
          parts: [{ function_response: { name: 'get_weather', response: { result: 'rainy' } } }],
          role: 'user',
        },
      }),
      event('gg', 'gen_ai.choice', {
        index: 0,
        content: { parts: [{ text: 'It is rainy.' }], role: 'model' },
        finish_reason: 'STOP',
      }),
    ]).step as StepDraft;
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Boston?' },
      { role: 'assistant', tool_calls: [call] },
      { role: 'tool', content: { result: 'rainy' } },
    ]);
    expect(step.response).toEqual([{ role: 'assistant', content: 'It is rainy.', finish_reason: 'stop' }]);
  });

  it("reads vertexai's events: the event names the role, Gemini parts as content, the choice's calls once with their ids", () => {
    const step = normalizeSpan(chat('vx'), [
      event('vx', 'gen_ai.system.message', { role: 'user', content: [{ text: 'Be brief.' }] }),
      event('vx', 'gen_ai.user.message', { role: 'user', content: [{ text: 'Weather in Boston?' }] }),
      event('vx', 'gen_ai.assistant.message', {
        role: 'model',
        content: [{ function_call: { name: 'get_weather', args: { location: 'Boston' } } }],
      }),
      event('vx', 'gen_ai.choice', {
        finish_reason: 'stop',
        index: 0,
        message: { role: 'model', content: [{ function_call: { name: 'get_weather', args: { location: 'Boston' } } }] },
        tool_calls: [
          {
            function: { name: 'get_weather', arguments: { location: 'Boston' } },
            id: 'get_weather_0',
            type: 'function',
          },
        ],
      }),
    ]).step as StepDraft;
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Boston?' },
      { role: 'assistant', tool_calls: [call] },
    ]);
    expect(step.response).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'get_weather_0', ...call }], finish_reason: 'stop' },
    ]);
  });

  it("reads a google-genai tool span's code.function.parameters.* and return value", () => {
    const step = stepOf({
      name: 'execute_tool get_weather',
      attributes: {
        'gen_ai.operation.name': 'execute_tool',
        'gen_ai.tool.name': 'get_weather',
        'code.function.parameters.location.type': 'str',
        'code.function.parameters.location.value': 'Boston, MA',
        'code.function.return.type': 'str',
        'code.function.return.value': 'rainy',
      },
    });
    expect([step.request, step.response]).toEqual([{ location: 'Boston, MA' }, 'rainy']);
  });
});

describe('OpenInference Agno, BeeAI, Haystack, smolagents', () => {
  it("reads Agno's answer from its output.value (a list of messages, or {messages} when streamed)", () => {
    const answer = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
      ],
    };
    const base = {
      'openinference.span.kind': 'LLM',
      'llm.model_name': 'gpt-4o',
      'output.mime_type': 'application/json',
      'llm.output_messages.0': j(answer),
    };
    const expected = [
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }] },
    ];
    expect(
      stepOf({
        name: 'OpenAIChat.invoke',
        scope: 'openinference.instrumentation.agno',
        attributes: { ...base, 'output.value': j([answer]) },
      }).response,
    ).toEqual(expected);
    expect(
      stepOf({
        name: 'OpenAIChat.invoke_stream',
        scope: 'openinference.instrumentation.agno',
        attributes: { ...base, 'output.value': j({ messages: [answer] }) },
      }).response,
    ).toEqual(expected);
  });

  it("reads the tool_call_id BeeAI writes beside a tool result's content part", () => {
    const step = stepOf({
      name: 'chat',
      scope: 'openinference.instrumentation.beeai',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.input_messages.0.message.role': 'tool',
        'llm.input_messages.0.message.contents.0.message.tool_call_id': 'call_1',
        'llm.input_messages.0.message.contents.0.message_content.type': 'text',
        'llm.input_messages.0.message.contents.0.message_content.text': 'sunny',
      },
    });
    expect(step.request).toEqual([{ role: 'tool', tool_call_id: 'call_1', content: 'sunny' }]);
  });

  it("keeps Haystack's PromptBuilder (an LLM span that renders a template) as context", () => {
    expect(
      normalizeSpan(
        span({
          name: 'PromptBuilder.run',
          scope: 'openinference.instrumentation.haystack',
          attributes: {
            'openinference.span.kind': 'LLM',
            'llm.prompt_template.template': 'Answer: {{question}}',
            'output.mime_type': 'text/plain',
            'output.value': 'Answer: Who?',
          },
        }),
      ).step,
    ).toBeNull();
  });

  it("reads smolagents' tool-call / tool-response roles and its tool input's kwargs", () => {
    const model = stepOf({
      name: 'OpenAIServerModel.__call__',
      scope: 'openinference.instrumentation.smolagents',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.input_messages.0.message.role': 'tool-call',
        'llm.input_messages.0.message.content': 'Calling tools: get_weather',
        'llm.input_messages.1.message.role': 'tool-response',
        'llm.input_messages.1.message.content': 'sunny',
      },
    });
    expect((model.request as { role: string }[]).map((m) => m.role)).toEqual(['assistant', 'tool']);
    const tool = stepOf({
      name: 'GetWeatherTool',
      scope: 'openinference.instrumentation.smolagents',
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'get_weather',
        'input.mime_type': 'application/json',
        'input.value': j({ args: [], sanitize_inputs_outputs: true, kwargs: { city: 'Paris' } }),
        'output.value': 'sunny',
      },
    });
    expect(tool.request).toEqual({ city: 'Paris' });
  });
});

describe('OpenInference AutoGen agentchat and Anthropic streams', () => {
  const scope = 'openinference.instrumentation.autogen_agentchat';
  it("reads AutoGen's CreateResult answer, its FunctionCall history and its function results", () => {
    const first = stepOf({
      name: 'OpenAIChatCompletionClient.create',
      scope,
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'Weather in Paris?',
        'output.mime_type': 'application/json',
        'output.value': j({
          finish_reason: 'function_calls',
          content: [{ id: 'call_1', arguments: '{"city":"Paris"}', name: 'get_weather' }],
          usage: { prompt_tokens: 50 },
          cached: false,
          logprobs: null,
          thought: null,
        }),
      },
    });
    const asked = { id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } };
    expect(first.response).toEqual([{ role: 'assistant', tool_calls: [asked], finish_reason: 'tool_calls' }]);
    const next = stepOf({
      name: 'OpenAIChatCompletionClient.create',
      scope,
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.input_messages.0.message.role': 'user',
        'llm.input_messages.0.message.content': 'Weather in Paris?',
        'llm.input_messages.1.message.role': 'assistant',
        'llm.input_messages.1.message.content': j([
          "FunctionCall(id='call_1', arguments='{\"city\":\"Paris\"}', name='get_weather')",
        ]),
        'llm.input_messages.2.message.role': 'function',
        'llm.input_messages.2.function.0': j({
          name: 'get_weather',
          content: 'sunny',
          call_id: 'call_1',
          is_error: false,
        }),
        'output.mime_type': 'application/json',
        'output.value': j({
          finish_reason: 'stop',
          content: 'Sunny.',
          usage: {},
          cached: false,
          logprobs: null,
          thought: null,
        }),
      },
    });
    expect(next.request).toEqual([
      { role: 'user', content: 'Weather in Paris?' },
      { role: 'assistant', tool_calls: [asked] },
      { role: 'tool', tool_call_id: 'call_1', content: 'sunny' },
    ]);
    expect(next.response).toEqual([{ role: 'assistant', content: 'Sunny.', finish_reason: 'stop' }]);
  });

  it('keeps the stop reason of a streamed Anthropic answer ({messages: [...]} with tool_name / tool_input blocks)', () => {
    const step = stepOf({
      name: 'Messages',
      scope: 'openinference.instrumentation.anthropic',
      attributes: {
        'openinference.span.kind': 'LLM',
        'output.mime_type': 'application/json',
        'output.value': j({
          messages: [
            {
              role: 'assistant',
              content: [
                { type: 'text', text: 'Let me check.' },
                { type: 'tool_use', tool_name: 'get_weather', tool_input: '{"city": "Paris"}' },
              ],
              stop_reason: 'tool_use',
            },
          ],
        }),
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.content': 'Let me check.',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'get_weather',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{"city": "Paris"}',
      },
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [{ name: 'get_weather', arguments: { city: 'Paris' } }],
        finish_reason: 'tool_calls',
      },
    ]);
  });
});

describe('JavaScript instrumentations: contrib OpenAI Responses built-in tools, LangChain JS, the Traceloop AI SDK transform', () => {
  const toolMessage = {
    lc: 1,
    type: 'constructor',
    id: ['langchain_core', 'messages', 'ToolMessage'],
    kwargs: {
      content: 'sunny',
      tool_call_id: 'call_1',
      name: 'get_weather',
      additional_kwargs: {},
      response_metadata: {},
    },
  };

  it("keeps a built-in tool's call beside its response in one answer message (@opentelemetry/instrumentation-openai responses.ts)", () => {
    const step = stepOf({
      name: 'responses',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4.1',
        'gen_ai.output.messages': j([
          {
            role: 'assistant',
            finish_reason: 'stop',
            parts: [
              { type: 'reasoning', content: 'think' },
              { type: 'tool_call', id: 'fs_1', name: 'file_search_call', arguments: ['paris weather'] },
              { type: 'tool_call_response', id: 'fs_1', response: { text: 'doc says sunny' } },
              { type: 'text', content: 'Sunny.' },
            ],
          },
        ]),
      },
    });
    expect(step.response).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'reasoning', text: 'think' }],
        tool_calls: [{ id: 'fs_1', name: 'file_search_call', arguments: ['paris weather'] }],
      },
      { role: 'tool', tool_call_id: 'fs_1', content: { text: 'doc says sunny' } },
      { role: 'assistant', content: 'Sunny.', finish_reason: 'stop' },
    ]);
  });

  it("reads an OpenInference JS LangChain tool's {output: ToolMessage}", () => {
    const step = stepOf({
      name: 'get_weather',
      scope: '@arizeai/openinference-instrumentation-langchain',
      attributes: {
        'openinference.span.kind': 'TOOL',
        'tool.name': 'get_weather',
        'input.value': '{"city":"Paris"}',
        'output.mime_type': 'application/json',
        'output.value': j({ output: toolMessage }),
      },
    });
    expect(step).toMatchObject({ response: 'sunny', toolCallId: 'call_1' });
  });

  it('reads a Traceloop JS LangChain tool run, traced as a task whose output is the ToolMessage', () => {
    const step = stepOf({
      name: 'DynamicStructuredTool.task',
      scope: '@traceloop/instrumentation-langchain',
      attributes: {
        'traceloop.span.kind': 'task',
        'traceloop.entity.name': 'DynamicStructuredTool',
        'traceloop.entity.input': j({ args: ['{"city":"Paris"}'] }),
        'traceloop.entity.output': j(toolMessage),
      },
    });
    expect(step).toMatchObject({
      kind: 'tool',
      tool: 'get_weather',
      toolCallId: 'call_1',
      request: { city: 'Paris' },
      response: 'sunny',
    });
    expect(
      normalizeSpan(
        span({
          name: 'RunnableSequence.task',
          attributes: { 'traceloop.span.kind': 'task', 'traceloop.entity.output': j({ answer: 1 }) },
        }),
      ).step,
    ).toBeNull();
  });

  it("reads the AI SDK transform's agent span (GenAI messages as entity input and output) and its older JSON-text tool parts", () => {
    const agent = stepOf({
      name: 'weather.agent',
      scope: 'ai',
      attributes: {
        'traceloop.span.kind': 'agent',
        'traceloop.entity.name': 'weather',
        'traceloop.entity.input': j([{ role: 'user', parts: [{ type: 'text', content: 'weather?' }] }]),
        'traceloop.entity.output': j([
          { role: 'assistant', parts: [{ type: 'text', content: 'It is 20C' }], finish_reason: 'stop' },
        ]),
      },
    });
    expect([agent.request, agent.response]).toEqual([
      [{ role: 'user', content: 'weather?' }],
      [{ role: 'assistant', content: 'It is 20C' }],
    ]);
    const older = stepOf({
      name: 'text.generate',
      scope: 'ai',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.input.messages': j([
          {
            role: 'assistant',
            parts: [
              {
                type: 'text',
                content: j([
                  { type: 'tool-call', toolCallId: 'call_1', toolName: 'getWeather', input: { city: 'Paris' } },
                ]),
              },
            ],
          },
          {
            role: 'tool',
            parts: [
              {
                type: 'text',
                content: j([
                  {
                    type: 'tool-result',
                    toolCallId: 'call_1',
                    toolName: 'getWeather',
                    output: { type: 'json', value: { t: 20 } },
                  },
                ]),
              },
            ],
          },
        ]),
      },
    });
    expect(older.request).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'getWeather', arguments: { city: 'Paris' } }] },
      { role: 'tool', tool_call_id: 'call_1', content: { t: 20 } },
    ]);
  });
});

describe("rules for one library that must not catch another's spans (second review)", () => {
  it("keeps the role a user message event's body names (developer, function), and a system event's role", () => {
    const step = stepOf({
      name: 'chat gpt-4o',
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' },
      events: [
        { name: 'gen_ai.user.message', attributes: { role: 'developer', content: 'Be terse.' } },
        { name: 'gen_ai.user.message', attributes: { role: 'function', content: '42' } },
        { name: 'gen_ai.system.message', attributes: { role: 'user', content: 'Be kind.' } },
      ],
    });
    expect((step.request as { role: string }[]).map((m) => m.role)).toEqual(['system', 'tool', 'system']);
  });

  it("leaves quoted legacy text, Converse-looking JSON outside Bedrock, and a meta-tool's {tool_name, arguments} as they are", () => {
    const legacy = stepOf({
      name: 'openai.chat',
      attributes: {
        'llm.request.type': 'chat',
        'gen_ai.prompt.0.role': 'user',
        'gen_ai.prompt.0.content': '"Paris"',
        'gen_ai.prompt.1.role': 'user',
        'gen_ai.prompt.1.content': j([{ text: 'a' }, { json: { k: 1 } }]),
      },
    });
    expect(legacy.request).toEqual([
      { role: 'user', content: '"Paris"' },
      { role: 'user', content: [{ text: 'a' }, { json: { k: 1 } }] },
    ]);
    const meta = stepOf({
      name: 'call_mcp_tool.tool',
      attributes: {
        'traceloop.span.kind': 'tool',
        'traceloop.entity.name': 'call_mcp_tool',
        'traceloop.entity.input': j({ tool_name: 'search', arguments: { q: 'x' } }),
      },
    });
    expect(meta.request).toEqual({ tool_name: 'search', arguments: { q: 'x' } });
  });

  it('keeps an OpenInference LLM span made inside a prompt template context (not Haystack) as a model call', () => {
    const step = stepOf({
      name: 'llm',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.prompt_template.template': 'Answer: {q}',
        'input.mime_type': 'application/json',
        'input.value': j({ messages: [{ role: 'user', content: 'Answer: hi' }] }),
      },
    });
    expect(step).toMatchObject({ kind: 'llm', request: [{ role: 'user', content: 'Answer: hi' }] });
  });
});

describe('Langfuse SDKs (OpenTelemetry-based: langfuse.observation.*)', () => {
  const observation = (type: string, attributes: Attributes, name = 'llm-call') =>
    normalizeSpan(
      span({ name, scope: 'langfuse-sdk', attributes: { 'langfuse.observation.type': type, ...attributes } }),
    ).step;

  it('reads a generation: messages in, the answer out, model, usage and parameters', () => {
    const step = observation('generation', {
      'langfuse.observation.input': j([
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Weather in Paris?' },
      ]),
      'langfuse.observation.output': j({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'w', arguments: '{"city":"Paris"}' } }],
      }),
      'langfuse.observation.model.name': 'gpt-4o',
      'langfuse.observation.model.parameters': j({ temperature: 0.2 }),
      'langfuse.observation.usage_details': j({ input: 12, output: 3, total: 15 }),
    }) as StepDraft;
    expect(step).toMatchObject({
      kind: 'llm',
      layout: 'langfuse',
      model: 'gpt-4o',
      params: { temperature: 0.2 },
      tokens: { input: 12, output: 3, cache_read: null },
    });
    expect(step.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
    ]);
    expect(step.response).toEqual([
      { role: 'assistant', tool_calls: [{ id: 'call_1', name: 'w', arguments: { city: 'Paris' } }] },
    ]);
    expect(
      (
        observation('generation', {
          'langfuse.observation.input': j('Hi'),
          'langfuse.observation.output': j('Hello!'),
        }) as StepDraft
      ).response,
    ).toEqual([{ role: 'assistant', content: 'Hello!' }]);
  });

  it('reads tools and agents as steps and the other observation types as context', () => {
    expect(
      observation(
        'tool',
        { 'langfuse.observation.input': j({ city: 'Paris' }), 'langfuse.observation.output': j('sunny') },
        'get_weather',
      ),
    ).toMatchObject({ kind: 'tool', tool: 'get_weather', request: { city: 'Paris' }, response: 'sunny' });
    expect(observation('agent', { 'langfuse.observation.input': j('Plan a trip') }, 'planner')).toMatchObject({
      kind: 'agent',
      request: [{ role: 'user', content: 'Plan a trip' }],
    });
    for (const type of ['span', 'chain', 'retriever', 'embedding', 'event']) expect(observation(type, {})).toBeNull();
  });
});
