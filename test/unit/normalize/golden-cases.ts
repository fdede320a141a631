/**
 * Edge cases per layout for the golden files (test/golden/normalize/<layout>-<case>.steps.json):
 * tool calls without ids, arguments as strings vs objects, multi-part content, empty
 * content, missing usage (null, not 0), content capture off, context spans. Hand-written in
 * each layout's exact key shapes (reference/genai-layouts.md), not captured.
 */
import type { LogRecord, SpanRecord } from '../../../src/spans/span-record.js';
import { log, span } from '../../helpers/span-builder.js';

export interface GoldenCase {
  layout: string;
  name: string;
  spans: SpanRecord[];
  logs?: LogRecord[];
}

const j = (v: unknown) => JSON.stringify(v);
const SYSTEM = 'You are terse.';

export const GOLDEN_CASES: GoldenCase[] = [
  {
    layout: 'otel-genai',
    name: 'parts-edge-cases',
    spans: [
      span({
        name: 'chat gpt-4o',
        kind: 'client',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.request.temperature': 0.5,
          'gen_ai.conversation.id': 'conv-1',
          'gen_ai.system_instructions': j([{ type: 'text', content: SYSTEM }]),
          'gen_ai.input.messages': j([
            {
              role: 'user',
              parts: [
                { type: 'text', content: 'Weather in ' },
                { type: 'text', content: 'Paris?' },
                { type: 'text', content: '' },
              ],
            },
            { role: 'assistant', parts: [{ type: 'tool_call', name: 'get_weather', arguments: '{"city": "Paris"}' }] }, // no id, string args
            { role: 'tool', parts: [{ type: 'tool_call_response', result: '{"temp_c":14}' }] }, // registry's "result" key, no id
            {
              role: 'user',
              parts: [
                { type: 'text', content: '"quoted"' },
                { type: 'uri', modality: 'image', uri: 'https://x/y.png', mime_type: 'image/png' },
              ],
            },
            { role: 'assistant', parts: [{ type: 'text', content: '' }] }, // empty content == missing
          ]),
          'gen_ai.output.messages': j([
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: 'call_9', name: 'get_weather', arguments: { city: 'Lyon' } }],
              finish_reason: 'tool_call',
            },
          ]),
          // no gen_ai.usage.*: tokens stay null
        },
      }),
    ],
  },
  {
    layout: 'otel-genai',
    name: 'structured-values-and-anthropic-sdk',
    spans: [
      span({
        name: 'anthropic.messages.create',
        kind: 'client',
        scope: 'com.anthropic.sdk.typescript',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'claude-sonnet-4-6',
          'gen_ai.response.model': 'claude-sonnet-4-6-20261001',
          'anthropic.message.stop_reason': 'end_turn',
          'gen_ai.usage.input_tokens': 120,
          'gen_ai.usage.output_tokens': 9,
          'gen_ai.usage.cache_read.input_tokens': 100,
          'gen_ai.usage.cache_write.input_tokens': 0,
          // structured (kvlist/array) values instead of JSON strings
          'gen_ai.input.messages': [
            { role: 'user', parts: [{ type: 'text', content: 'Weather?' }] },
            {
              role: 'assistant',
              parts: [
                { type: 'text', content: 'Checking.' },
                { type: 'tool_call', id: 'toolu_1', name: 'get_weather', arguments: { city: 'Paris' } },
              ],
            },
            {
              role: 'user',
              parts: [
                { type: 'tool_call_response', id: 'toolu_1', response: [{ type: 'text', text: '{"temp_c":14}' }] },
              ],
            },
          ],
          'gen_ai.output.messages': [{ role: 'assistant', parts: [{ type: 'text', content: 'Rainy, 14 °C.' }] }],
        },
      }),
    ],
  },
  {
    layout: 'otel-genai',
    name: 'agent-tool-and-context',
    spans: [
      span({
        name: 'invoke_agent planner',
        id: 'agent',
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': 'planner',
          'gen_ai.conversation.id': 'conv-2',
          'tapedeck.parent_run': 'conv-1',
          'gen_ai.input.messages': j([{ role: 'user', parts: [{ type: 'text', content: 'Plan a trip' }] }]),
        },
      }),
      span({
        name: 'execute_tool search',
        id: 'tool',
        parent: 'agent',
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'search',
          'gen_ai.tool.call.id': 'call_s',
          'gen_ai.tool.call.arguments': '{"q":"Paris"}',
          'gen_ai.tool.call.result': 'no results', // plain text stays text
        },
      }),
      span({
        name: 'execute_tool search',
        id: 'tool-off',
        parent: 'agent',
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': 'search', // content capture off
        },
      }),
      span({
        name: 'embeddings text-embedding-3',
        id: 'emb',
        parent: 'agent',
        attributes: { 'gen_ai.operation.name': 'embeddings', 'gen_ai.request.model': 'text-embedding-3' },
      }),
      span({
        name: 'GET /weather',
        id: 'http',
        parent: 'tool',
        kind: 'client',
        attributes: { 'http.request.method': 'GET' },
      }),
    ],
  },
  {
    // pydantic-ai (instrumentation version 3+): the agent run span names no operation; its
    // conversation is pydantic_ai.all_messages, its usage the run's sum (not a model call's).
    layout: 'otel-genai',
    name: 'pydantic-ai-agent-run',
    spans: [
      span({
        name: 'invoke_agent weather_agent',
        id: 'run',
        scope: 'pydantic-ai',
        attributes: {
          model_name: 'gpt-4o',
          agent_name: 'weather_agent',
          'gen_ai.agent.name': 'weather_agent',
          'logfire.msg': 'weather_agent run',
          final_result: 'Rainy.',
          'gen_ai.system_instructions': j([{ type: 'text', content: SYSTEM }]),
          'pydantic_ai.all_messages': j([
            { role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] },
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
            },
            {
              role: 'user',
              parts: [{ type: 'tool_call_response', id: 'call_1', name: 'get_weather', result: 'rain' }],
            },
            { role: 'assistant', parts: [{ type: 'text', content: 'Rainy.' }], finish_reason: 'stop' },
          ]),
          'gen_ai.usage.input_tokens': 90,
          'gen_ai.usage.output_tokens': 12,
        },
      }),
      span({
        name: 'chat gpt-4o',
        id: 'chat',
        parent: 'run',
        kind: 'client',
        scope: 'pydantic-ai',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.system_instructions': j([{ type: 'text', content: SYSTEM }]),
          'gen_ai.input.messages': j([{ role: 'user', parts: [{ type: 'text', content: 'Weather in Paris?' }] }]),
          'gen_ai.output.messages': j([
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: { city: 'Paris' } }],
              finish_reason: 'tool_call',
            },
          ]),
        },
      }),
      span({
        name: 'execute_tool get_weather',
        id: 'tool',
        parent: 'run',
        scope: 'pydantic-ai',
        attributes: {
          'gen_ai.tool.name': 'get_weather',
          'gen_ai.tool.call.id': 'call_1',
          'gen_ai.tool.call.arguments': '{"city":"Paris"}',
          'gen_ai.tool.call.result': 'rain',
        },
      }),
    ],
  },
  {
    layout: 'otel-genai-events',
    name: 'log-records',
    spans: [
      span({
        name: 'chat gpt-4o-mini',
        id: 'chat',
        kind: 'client',
        scope: '@opentelemetry/instrumentation-openai',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.request.max_tokens': 64,
          'gen_ai.response.finish_reasons': ['stop'],
          'gen_ai.usage.input_tokens': 50,
          'gen_ai.usage.output_tokens': 4,
        },
      }),
    ],
    logs: [
      log('chat', 'gen_ai.system.message', { content: SYSTEM }),
      log('chat', 'gen_ai.user.message', { content: 'Weather?' }),
      log('chat', 'gen_ai.assistant.message', {
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      }),
      log('chat', 'gen_ai.tool.message', { id: 'call_1', content: '{"temp_c":14}' }),
      log('chat', 'gen_ai.choice', { index: 0, finish_reason: 'stop', message: { content: 'Rainy.' } }),
    ],
  },
  {
    layout: 'otel-genai-events',
    name: 'content-off',
    spans: [
      span({
        name: 'chat gpt-4o-mini',
        id: 'chat',
        kind: 'client',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.request.model': 'gpt-4o-mini',
          'gen_ai.response.model': 'gpt-4o-mini-2024-07-18',
          'gen_ai.usage.input_tokens': 50, // output tokens not reported: null, not 0
        },
      }),
    ],
    logs: [
      log('chat', 'gen_ai.user.message', {}),
      log('chat', 'gen_ai.choice', {
        index: 0,
        finish_reason: 'tool_calls',
        message: { tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather' } }] },
      }),
    ],
  },
  {
    layout: 'openllmetry',
    name: 'legacy-indexed',
    spans: [
      span({
        name: 'openai.chat',
        kind: 'client',
        scope: 'opentelemetry.instrumentation.openai',
        attributes: {
          'llm.request.type': 'chat',
          'gen_ai.system': 'openai',
          'gen_ai.request.model': 'gpt-4o',
          'gen_ai.response.model': 'gpt-4o-2024-08-06',
          'traceloop.association.properties.session_id': 'sess-legacy',
          'gen_ai.prompt.0.role': 'system',
          'gen_ai.prompt.0.content': SYSTEM,
          'gen_ai.prompt.1.role': 'user',
          'gen_ai.prompt.1.content': j([
            { type: 'text', text: 'Weather in ' },
            { type: 'text', text: 'Paris?' },
          ]),
          'gen_ai.prompt.2.role': 'assistant',
          'gen_ai.prompt.2.content': '',
          'gen_ai.prompt.2.tool_calls.0.name': 'get_weather',
          'gen_ai.prompt.2.tool_calls.0.arguments': '{"city":"Paris"}', // no id
          'gen_ai.prompt.3.role': 'tool',
          'gen_ai.prompt.3.content': '{"temp_c":14}',
          'gen_ai.prompt.3.tool_call_id': 'call_1',
          'gen_ai.completion.0.role': 'assistant',
          'gen_ai.completion.0.finish_reason': 'function_call',
          'gen_ai.completion.0.function_call.name': 'get_time',
          'gen_ai.completion.0.function_call.arguments': '{"tz": "CET"}',
          'gen_ai.usage.prompt_tokens': 40,
          'gen_ai.usage.completion_tokens': 8,
          'llm.usage.total_tokens': 48,
        },
      }),
    ],
  },
  {
    layout: 'openllmetry',
    name: 'sdk-wrappers',
    spans: [
      span({
        name: 'trip.workflow',
        id: 'wf',
        scope: '@traceloop/node-server-sdk',
        attributes: {
          'traceloop.span.kind': 'workflow',
          'traceloop.entity.name': 'trip',
          'gen_ai.conversation.id': 'sess-w',
        },
      }),
      span({
        name: 'planner.agent',
        id: 'agent',
        parent: 'wf',
        scope: '@traceloop/node-server-sdk',
        attributes: {
          'traceloop.span.kind': 'agent',
          'traceloop.entity.name': 'planner',
          'gen_ai.agent.name': 'planner',
          'traceloop.entity.input': j({ args: ['Paris'], kwargs: {} }),
          'traceloop.entity.output': j('Done.'),
        },
      }),
      span({
        name: 'lookup.tool',
        id: 't1',
        parent: 'agent',
        scope: '@traceloop/node-server-sdk',
        attributes: {
          'traceloop.span.kind': 'tool',
          'traceloop.entity.name': 'lookup',
          'traceloop.entity.input': j({ args: ['Paris', 2], kwargs: { units: 'C' } }), // both: left as it is
          'traceloop.entity.output': j('{"temp_c":14}'), // a JSON string returned as a string: read as JSON
        },
      }),
      span({
        name: 'fetch.task',
        id: 'task',
        parent: 'agent',
        scope: '@traceloop/node-server-sdk',
        attributes: { 'traceloop.span.kind': 'task' },
      }),
      span({
        name: 'chat claude-sonnet-4-6',
        id: 'chat',
        parent: 'agent',
        kind: 'client',
        scope: '@traceloop/instrumentation-anthropic',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': 'anthropic',
          'gen_ai.request.model': 'claude-sonnet-4-6',
          'gen_ai.system_instructions': j([{ type: 'text', content: SYSTEM }]),
          'gen_ai.input.messages': j([{ role: 'user', parts: [{ type: 'text', content: 'Hi' }] }]),
          'gen_ai.output.messages': j([
            { role: 'assistant', finish_reason: '', parts: [{ type: 'text', content: 'Hello.' }] },
          ]),
          // raw Anthropic input_tokens (cache excluded) + the cache counts beside it
          'gen_ai.usage.input_tokens': 20,
          'gen_ai.usage.cache_read.input_tokens': 100,
          'gen_ai.usage.cache_creation.input_tokens': 5,
          'gen_ai.usage.output_tokens': 3,
        },
      }),
    ],
  },
  {
    layout: 'openinference',
    name: 'flattened-edge-cases',
    spans: [
      span({
        name: 'ChatModel',
        scope: '@arizeai/openinference-instrumentation-langchain',
        attributes: {
          'openinference.span.kind': 'LLM',
          'session.id': 'sess-oi',
          'llm.model_name': 'gpt-4o',
          'llm.invocation_parameters': j({ model: 'gpt-4o', temperature: 0, max_completion_tokens: 100, stop: '\n' }),
          'input.value': 'not a request body',
          'input.mime_type': 'text/plain',
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.contents.0.message_content.type': 'text',
          'llm.input_messages.0.message.contents.0.message_content.text': 'What is in ',
          'llm.input_messages.0.message.contents.1.message_content.type': 'text',
          'llm.input_messages.0.message.contents.1.message_content.text': 'this image?',
          'llm.input_messages.0.message.contents.2.message_content.type': 'image',
          'llm.input_messages.0.message.contents.2.message_content.image.image.url': 'https://x/cat.png',
          'llm.input_messages.1.message.role': 'assistant',
          'llm.input_messages.1.message.content': '',
          'llm.input_messages.1.message.tool_calls.0.tool_call.function.name': 'describe', // no id
          'llm.input_messages.1.message.tool_calls.0.tool_call.function.arguments': '{"detail": "high"', // not valid JSON: kept as text
          'llm.input_messages.2.message.role': 'tool',
          'llm.input_messages.2.message.content': '[1, 2, 3]',
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.content': 'A cat.',
          'llm.finish_reason': 'length',
          'llm.token_count.prompt': 900,
          'llm.token_count.completion': 3,
          // no completion/cache details: null, not 0
        },
      }),
    ],
  },
  {
    // openinference-instrumentation-openai-agents: the Responses API's input items and Response
    // (a turn's reasoning, text and parallel calls; the finish reason only in the body)
    layout: 'openinference',
    name: 'responses-api-bodies',
    spans: [
      span({
        name: 'response',
        scope: 'openinference.instrumentation.openai_agents',
        attributes: {
          'openinference.span.kind': 'LLM',
          'llm.system': 'openai',
          'llm.model_name': 'gpt-4o',
          'llm.invocation_parameters': j({
            id: 'resp_2',
            object: 'response',
            created_at: 1,
            instructions: SYSTEM,
            model: 'gpt-4o',
            temperature: 0.2,
          }),
          'input.mime_type': 'application/json',
          'input.value': j([
            { role: 'user', content: [{ type: 'input_text', text: 'Weather and time in Paris?' }] },
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
              arguments: '',
              status: 'completed',
            }, // no arguments
            { type: 'function_call_output', call_id: 'call_1', output: '{"temp_c": 14}' },
            { type: 'function_call_output', call_id: 'call_2', output: '' }, // empty result
          ]),
          'output.mime_type': 'application/json',
          'output.value': j({
            id: 'resp_2',
            object: 'response',
            status: 'incomplete',
            incomplete_details: { reason: 'max_output_tokens' },
            output: [
              { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'Both answered.' }] },
              {
                type: 'message',
                id: 'msg_1',
                role: 'assistant',
                status: 'incomplete',
                content: [{ type: 'output_text', text: 'Rainy, 14 °C, and it is', annotations: [] }],
              },
            ],
          }),
        },
      }),
    ],
  },
  {
    layout: 'openinference',
    name: 'provider-body-preferred',
    spans: [
      span({
        name: 'Anthropic Messages',
        id: 'llm',
        attributes: {
          'openinference.span.kind': 'LLM',
          'session.id': 'sess-oi2',
          'llm.model_name': 'claude-sonnet-4-6',
          'llm.provider': 'anthropic',
          'input.mime_type': 'application/json',
          'input.value': j({
            model: 'claude-sonnet-4-6',
            max_tokens: 64,
            system: SYSTEM,
            messages: [
              { role: 'user', content: 'Paris and Lyon?' },
              {
                role: 'assistant',
                content: [
                  { type: 'tool_use', id: 'toolu_p', name: 'w', input: { city: 'Paris' } },
                  { type: 'tool_use', id: 'toolu_l', name: 'w', input: { city: 'Lyon' } },
                ],
              },
              {
                role: 'user',
                content: [
                  { type: 'tool_result', tool_use_id: 'toolu_p', content: '{"t":14}' },
                  { type: 'tool_result', tool_use_id: 'toolu_l', content: [{ type: 'text', text: '{"t":21}' }] },
                ],
              },
            ],
          }),
          // the flattened keys kept only the last tool result
          'llm.input_messages.0.message.role': 'user',
          'llm.input_messages.0.message.content': 'Paris and Lyon?',
          'llm.input_messages.1.message.role': 'user',
          'llm.input_messages.1.message.tool_call_id': 'toolu_l',
          'llm.input_messages.1.message.content': '{"t":21}',
          'output.mime_type': 'text/plain',
          'output.value': 'Lyon is warmer.', // streamed: plain text
          'llm.output_messages.0.message.role': 'assistant',
          'llm.output_messages.0.message.content': 'Lyon is warmer.',
          'llm.finish_reason': 'end_turn',
        },
      }),
      span({
        name: 'w',
        id: 'tool',
        attributes: {
          'openinference.span.kind': 'TOOL',
          'input.value': '"Paris"',
          'input.mime_type': 'application/json',
          'output.value': '14',
          'output.mime_type': 'text/plain',
        },
      }),
      span({ name: 'retrieve', id: 'ret', attributes: { 'openinference.span.kind': 'RETRIEVER' } }),
    ],
  },
  {
    layout: 'vercel-ai',
    name: 'legacy-ai-spans',
    spans: [
      span({
        name: 'ai.generateText',
        id: 'outer',
        scope: 'ai',
        attributes: {
          'ai.operationId': 'ai.generateText',
          'ai.telemetry.metadata.sessionId': 'sess-ai',
          'ai.usage.promptTokens': 99,
        },
      }),
      span({
        name: 'ai.generateText.doGenerate',
        id: 'do',
        parent: 'outer',
        scope: 'ai',
        attributes: {
          'ai.operationId': 'ai.generateText.doGenerate',
          'ai.model.id': 'gpt-4o',
          'ai.model.provider': 'openai.chat',
          'ai.response.model': 'gpt-4o-2024-08-06',
          'ai.prompt.messages': j([
            { role: 'system', content: SYSTEM },
            { role: 'user', content: [{ type: 'text', text: 'Weather?' }] },
            {
              role: 'assistant',
              content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'w', input: { city: 'Paris' } }],
            },
            {
              role: 'tool',
              content: [
                {
                  type: 'tool-result',
                  toolCallId: 'call_1',
                  toolName: 'w',
                  output: { type: 'json', value: { t: 14 } },
                },
              ],
            },
          ]),
          'ai.response.text': '',
          'ai.response.toolCalls': j([{ toolCallId: 'call_2', toolName: 'w', input: '{"city":"Lyon"}' }]),
          'ai.response.finishReason': 'tool-calls',
          'gen_ai.request.temperature': 0.3,
          'ai.usage.promptTokens': 99,
          'ai.usage.completionTokens': 7,
        },
      }),
      span({
        name: 'ai.toolCall',
        id: 'tc',
        parent: 'outer',
        scope: 'ai',
        attributes: {
          'ai.operationId': 'ai.toolCall',
          'ai.toolCall.name': 'w',
          'ai.toolCall.id': 'call_2',
          'ai.toolCall.args': '{"city":"Lyon"}',
          'ai.toolCall.result': '{"t":21}',
        },
      }),
    ],
  },
];
