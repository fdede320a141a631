/**
 * @module replay/render-openai
 * A recorded answer as an OpenAI ChatCompletion, or as the chat.completion.chunk stream the
 * SDKs parse (provider-wire.md §2): no `event:` lines; a first delta carrying the role; text
 * re-chunked at whitespace; each tool call opened with index, id, type and name, then its
 * arguments in pieces; a finish chunk; a usage chunk with `choices: []` when the request set
 * stream_options.include_usage; then `data: [DONE]`.
 */
import { renderJson } from '../json/canonical.js';
import { jsonString } from '../json/json-string.js';
import { chunkText } from './chunk-text.js';
import {
  argumentsText,
  BoundedBody,
  createdFor,
  finishFor,
  hasUsage,
  modelFor,
  type RenderInput,
  type Rendered,
  responseIdFor,
  toolCallIdFor,
} from './render-common.js';

type Obj = Record<string, unknown>;

export function openAiUsage(input: RenderInput): Obj | null {
  const t = input.tokens;
  if (!hasUsage(t)) return null;
  const prompt = t.input ?? 0;
  const completion = t.output ?? 0;
  const usage: Obj = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  const details: Obj = {};
  if (t.cache_read !== null) details.cached_tokens = t.cache_read;
  if (t.cache_write !== null) details.cache_write_tokens = t.cache_write;
  if (Object.keys(details).length > 0) usage.prompt_tokens_details = details;
  return usage;
}

function toolCalls(input: RenderInput): Obj[] {
  return input.answer.toolCalls.map((call, i) => ({
    id: toolCallIdFor(input, i, 'call_'),
    type: 'function',
    function: { name: call.name, arguments: argumentsText(call.arguments) },
  }));
}

export function renderOpenAi(input: RenderInput): Rendered {
  return input.stream ? renderStream(input) : renderPlain(input);
}

function renderPlain(input: RenderInput): Rendered {
  const message: Obj = { role: 'assistant', content: input.answer.text, refusal: null };
  if (input.answer.toolCalls.length > 0) message.tool_calls = toolCalls(input);
  const completion: Obj = {
    id: responseIdFor(input, 'chatcmpl-'),
    object: 'chat.completion',
    created: createdFor(input),
    model: modelFor(input),
    choices: [{ index: 0, message, logprobs: null, finish_reason: finishFor(input.answer) }],
    system_fingerprint: null,
  };
  const usage = openAiUsage(input);
  if (usage) completion.usage = usage;
  const body = new BoundedBody(input.maxBytes);
  body.json(completion);
  return { contentType: 'application/json', body: body.toBuffer() };
}

function renderStream(input: RenderInput): Rendered {
  const body = new BoundedBody(input.maxBytes);
  const fixed: Obj = {
    id: responseIdFor(input, 'chatcmpl-'),
    object: 'chat.completion.chunk',
    created: createdFor(input),
    model: modelFor(input),
    system_fingerprint: null,
  };
  // Every chunk repeats the fixed fields; "choices" sorts before all of them and "usage" after
  // (present on every chunk once asked for, null until the last), so each chunk is
  // `{"choices":[<choice>],` + the fixed fields rendered once: the bytes renderJson gives.
  const fixedMembers = renderJson(fixed).slice(1, -1);
  const tail = input.includeUsage ? `${fixedMembers},"usage":null}` : `${fixedMembers}}`;
  // The choice's members written in their sorted order (delta, finish_reason, index, logprobs),
  // as renderJson writes them, without sorting them again for every chunk.
  const event = (deltaJson: string, finish: string | null = null): void => {
    const finishJson = finish === null ? 'null' : renderJson(finish);
    body.push(
      `data: {"choices":[{"delta":${deltaJson},"finish_reason":${finishJson},"index":0,"logprobs":null}],${tail}\n\n`,
    );
  };

  event('{"content":"","refusal":null,"role":"assistant"}');
  for (const piece of chunkText(input.answer.text ?? '')) event(`{"content":${jsonString(piece)}}`);
  input.answer.toolCalls.forEach((call, index) => {
    event(
      renderJson({
        tool_calls: [
          {
            index,
            id: toolCallIdFor(input, index, 'call_'),
            type: 'function',
            function: { name: call.name, arguments: '' },
          },
        ],
      }),
    );
    for (const piece of chunkText(argumentsText(call.arguments))) {
      event(`{"tool_calls":[{"function":{"arguments":${jsonString(piece)}},"index":${index}}]}`);
    }
  });
  event('{}', finishFor(input.answer));
  const usage = openAiUsage(input);
  if (input.includeUsage && usage) body.push(`data: {"choices":[],${fixedMembers},"usage":${renderJson(usage)}}\n\n`);
  body.push('data: [DONE]\n\n');
  return { contentType: 'text/event-stream; charset=utf-8', body: body.toBuffer() };
}
