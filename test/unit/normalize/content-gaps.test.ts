/**
 * Content that layouts record and the normalizer once left unread or read apart: completion
 * prompts (`llm.prompts`), Traceloop's pre-gen_ai `llm.prompts.N.*`, Gemini `contents` in every
 * spelling the SDK accepts, roles no alias maps, and multimodal parts (docs/architecture.md
 * "Messages", "Parts"). The corpus has no capture of these, so each span is built from the
 * library's own source, named in each test.
 */
import { describe, expect, it } from 'vitest';
import { normalizeSpan } from '../../../src/normalize/normalize.js';
import { comparableDigest } from '../../../src/normalize/comparable.js';
import type { StepDraft } from '../../../src/normalize/step.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import { span, type SpanInit } from '../../helpers/span-builder.js';

const j = (v: unknown) => JSON.stringify(v);
const stepOf = (init: SpanInit) => normalizeSpan(span(init)).step as StepDraft;
const digest = (v: JsonValue | null) => comparableDigest(v);

describe('completion prompts', () => {
  it('reads OpenInference llm.prompts and the answer text of a completion span', () => {
    // openinference-instrumentation-llama-index _handler.py: an LLMCompletionStartEvent sets
    // LLM_PROMPTS = [event.prompt]; its end event sets OUTPUT_VALUE = response.text
    const step = stepOf({
      name: 'OpenAI.complete',
      scope: 'openinference.instrumentation.llama_index',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gpt-3.5-turbo-instruct',
        'llm.prompts': ['Complete: the capital of France is'],
        'input.value': 'Complete: the capital of France is',
        'output.value': ' Paris.',
        'llm.token_count.prompt': 7,
        'llm.token_count.completion': 2,
      },
    });
    expect([step.kind, step.request, step.response]).toEqual([
      'llm',
      [{ role: 'user', content: 'Complete: the capital of France is' }],
      [{ role: 'assistant', content: ' Paris.' }],
    ]);
  });

  it('reads one prompt per llm.prompts item (openinference-instrumentation-anthropic completions)', () => {
    // openinference-instrumentation-anthropic _wrappers.py _get_llm_prompts: yield LLM_PROMPTS, [prompt]
    const step = stepOf({
      name: 'Completions',
      scope: 'openinference.instrumentation.anthropic',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'claude-2.1',
        'llm.prompts': ['\n\nHuman: Hi\n\nAssistant:'],
        'output.value': ' Hello!',
        'output.mime_type': 'text/plain',
      },
    });
    expect(step.request).toEqual([{ role: 'user', content: '\n\nHuman: Hi\n\nAssistant:' }]);
    expect(step.response).toEqual([{ role: 'assistant', content: ' Hello!' }]);
  });

  it("reads Traceloop's legacy llm.prompts.N.* / llm.completions.N.* keys like gen_ai.prompt.N.*", () => {
    // opentelemetry-semantic-conventions-ai before the gen_ai rename: LLM_PROMPTS = "llm.prompts",
    // LLM_COMPLETIONS = "llm.completions"; the instrumentations wrote f"{LLM_PROMPTS}.{i}.role" etc.
    const legacy = stepOf({
      name: 'openai.chat',
      scope: 'opentelemetry.instrumentation.openai',
      attributes: {
        'llm.request.type': 'chat',
        'llm.vendor': 'OpenAI',
        'llm.request.model': 'gpt-4',
        'llm.prompts.0.role': 'system',
        'llm.prompts.0.content': 'Be brief.',
        'llm.prompts.1.role': 'user',
        'llm.prompts.1.content': 'Weather in Paris?',
        'llm.completions.0.role': 'assistant',
        'llm.completions.0.content': 'Sunny.',
        'llm.completions.0.finish_reason': 'stop',
      },
    });
    const current = stepOf({
      name: 'openai.chat',
      scope: 'opentelemetry.instrumentation.openai',
      attributes: {
        'llm.request.type': 'chat',
        'gen_ai.request.model': 'gpt-4',
        'gen_ai.prompt.0.role': 'system',
        'gen_ai.prompt.0.content': 'Be brief.',
        'gen_ai.prompt.1.role': 'user',
        'gen_ai.prompt.1.content': 'Weather in Paris?',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.content': 'Sunny.',
        'gen_ai.completion.0.finish_reason': 'stop',
      },
    });
    expect(legacy.request).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Weather in Paris?' },
    ]);
    expect(legacy.response).toEqual([{ role: 'assistant', content: 'Sunny.', finish_reason: 'stop' }]);
    expect([digest(legacy.request), digest(legacy.response)]).toEqual([
      digest(current.request),
      digest(current.response),
    ]);
  });

  it("reads a Traceloop completion's llm.prompts given as a list of texts", () => {
    // opentelemetry-instrumentation-watsonx: _set_span_attribute(span, LLM_PROMPTS, [prompt]) with legacy attributes
    const step = stepOf({
      name: 'watsonx.generate',
      scope: 'opentelemetry.instrumentation.watsonx',
      attributes: {
        'llm.request.type': 'completion',
        'llm.request.model': 'ibm/granite-13b',
        'llm.prompts': ['Say hi'],
        'llm.completions.0.content': 'Hi!',
      },
    });
    expect([step.request, step.response]).toEqual([
      [{ role: 'user', content: 'Say hi' }],
      [{ role: 'assistant', content: 'Hi!' }],
    ]);
  });
});

describe('Gemini contents in every spelling google-genai accepts', () => {
  // google-genai _transformers.py t_contents (ContentListUnion): a str, a Content, a Part, or
  // a list of them; texts and parts in a row become one user Content. OpenInference's
  // google-genai instrumentation records the call's arguments as they were passed.
  const gemini = (contents: unknown) =>
    stepOf({
      name: 'GenerateContent',
      scope: 'openinference.instrumentation.google_genai',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.model_name': 'gemini-2.5-flash',
        'input.mime_type': 'application/json',
        'input.value': j({ model: 'gemini-2.5-flash', contents }),
      },
    }).request;
  const asList = gemini([{ role: 'user', parts: [{ text: 'What is this?' }] }]);

  it('reads contents given as text', () => {
    expect(gemini('What is this?')).toEqual([{ role: 'user', content: 'What is this?' }]);
    expect(digest(gemini('What is this?'))).toBe(digest(asList));
  });

  it('reads contents given as one Content object', () => {
    expect(gemini({ role: 'user', parts: [{ text: 'What is this?' }] })).toEqual(asList);
  });

  it('reads contents given as a list of bare parts (and texts) as one user turn', () => {
    expect(gemini([{ text: 'What is' }, ' this?'])).toEqual([{ role: 'user', content: 'What is this?' }]);
    expect(
      gemini([{ text: 'What is this?' }, { inline_data: { mime_type: 'image/png', data: 'iVBORw0KGgo=' } }]),
    ).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image', data: 'iVBORw0KGgo=', mime_type: 'image/png' },
        ],
      },
    ]);
  });

  it('reads a single bare part as the user turn', () => {
    expect(gemini({ text: 'What is this?' })).toEqual(asList);
  });
});

describe('roles', () => {
  it('keeps a role no alias maps as recorded, in every layout', () => {
    // AutoGen / CrewAI style agent roles, recorded as OpenInference flattened messages and GenAI parts
    const oi = stepOf({
      name: 'LLM',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.input_messages.0.message.role': 'critic',
        'llm.input_messages.0.message.content': 'Too long.',
      },
    });
    const genAi = stepOf({
      name: 'chat m',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': j([{ role: 'critic', parts: [{ type: 'text', content: 'Too long.' }] }]),
      },
    });
    expect(oi.request).toEqual([{ role: 'critic', content: 'Too long.' }]);
    expect(genAi.request).toEqual(oi.request);
  });
});

describe('multimodal parts: one shape each', () => {
  const PNG = 'iVBORw0KGgo=';

  it('reads an OpenAI data-URI image and an OTel GenAI blob as the same image part, keeping detail', () => {
    // OpenAI chat: {type: "image_url", image_url: {url: "data:image/png;base64,...", detail}} in the
    // request body; OTel GenAI v1.37 BlobPart: {type: "blob", modality: "image", mime_type, content}
    const body = stepOf({
      name: 'LLM',
      attributes: {
        'openinference.span.kind': 'LLM',
        'input.mime_type': 'application/json',
        'input.value': j({
          model: 'gpt-4o',
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'What is this?' },
                { type: 'image_url', image_url: { url: `data:image/png;base64,${PNG}` } },
              ],
            },
          ],
        }),
      },
    });
    const blob = stepOf({
      name: 'chat gpt-4o',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': j([
          {
            role: 'user',
            parts: [
              { type: 'text', content: 'What is this?' },
              { type: 'blob', modality: 'image', mime_type: 'image/png', content: PNG },
            ],
          },
        ]),
      },
    });
    const image = { type: 'image', data: PNG, mime_type: 'image/png' };
    expect(body.request).toEqual([{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, image] }]);
    expect(blob.request).toEqual(body.request);

    const detailed = stepOf({
      name: 'LLM',
      attributes: {
        'openinference.span.kind': 'LLM',
        'input.mime_type': 'application/json',
        'input.value': j({
          messages: [
            { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/cat.png', detail: 'low' } }] },
          ],
        }),
      },
    });
    expect(detailed.request).toEqual([
      { role: 'user', content: [{ type: 'image', url: 'https://x/cat.png', detail: 'low' }] },
    ]);
  });

  it("keeps a tool result's is_error (Anthropic tool_result blocks, the AI SDK's error outputs)", () => {
    // @anthropic-ai/sdk ToolResultBlockParam: {type: "tool_result", tool_use_id, content, is_error}
    const anthropic = stepOf({
      name: 'LLM',
      attributes: {
        'openinference.span.kind': 'LLM',
        'input.mime_type': 'application/json',
        'input.value': j({
          model: 'claude',
          messages: [
            {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'city not found', is_error: true }],
            },
          ],
        }),
      },
    });
    // ai (v5) ToolResultPart: {type: "tool-result", toolCallId, toolName, output: {type: "error-text", value}}
    const aiSdk = stepOf({
      name: 'chat m',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.input.messages': j([
          {
            role: 'tool',
            content: [
              {
                type: 'tool-result',
                toolCallId: 'toolu_1',
                toolName: 'w',
                output: { type: 'error-text', value: 'city not found' },
              },
            ],
          },
        ]),
      },
    });
    const failed = [{ role: 'tool', tool_call_id: 'toolu_1', content: 'city not found', is_error: true }];
    expect(anthropic.request).toEqual(failed);
    expect(aiSdk.request).toEqual(failed);
  });

  it('gives a tool call with no arguments one shape in every layout', () => {
    // OpenAI sends "{}"; Anthropic's tool_use input is {}; a stream of a call with no input
    // accumulates "" (opentelemetry-instrumentation-anthropic streaming.py joins the deltas)
    const openAi = stepOf({
      name: 'LLM',
      attributes: {
        'openinference.span.kind': 'LLM',
        'llm.output_messages.0.message.role': 'assistant',
        'llm.output_messages.0.message.tool_calls.0.tool_call.id': 'c1',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.name': 'now',
        'llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments': '{}',
      },
    });
    const anthropic = stepOf({
      name: 'chat m',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.output.messages': j([
          { role: 'assistant', parts: [{ type: 'tool_call', id: 'c1', name: 'now', arguments: {} }] },
        ]),
      },
    });
    const streamed = stepOf({
      name: 'anthropic.chat',
      scope: 'opentelemetry.instrumentation.anthropic',
      attributes: {
        'llm.request.type': 'chat',
        'gen_ai.completion.0.role': 'assistant',
        'gen_ai.completion.0.tool_calls.0.id': 'c1',
        'gen_ai.completion.0.tool_calls.0.name': 'now',
        'gen_ai.completion.0.tool_calls.0.arguments': '',
      },
    });
    const expected = [{ role: 'assistant', tool_calls: [{ id: 'c1', name: 'now', arguments: {} }] }];
    expect(openAi.response).toEqual(expected);
    expect(anthropic.response).toEqual(expected);
    expect(streamed.response).toEqual(expected);
  });
});
