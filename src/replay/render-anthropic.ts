/**
 * @module replay/render-anthropic
 * A recorded answer as an Anthropic Message, or as its event stream (provider-wire.md §4):
 * every event named by an `event:` line equal to its data's type; message_start with a full
 * message (empty content, usage); content blocks started in index order, text as text_delta
 * pieces and tool input as input_json_delta pieces; message_delta carrying the stop reason and
 * the usage totals; message_stop. One message per answer: several recorded assistant messages
 * were already folded into one text and one list of tool calls.
 */
import type { JsonValue } from '../json/json-value.js';
import { chunkText } from './chunk-text.js';
import { RecordedJson, renderJson } from '../json/canonical.js';
import {
  BoundedBody,
  finishFor,
  modelFor,
  type RenderInput,
  type Rendered,
  responseIdFor,
  toolCallIdFor,
} from './render-common.js';

type Obj = Record<string, unknown>;

const stopReasons: Record<string, string> = {
  stop: 'end_turn',
  tool_calls: 'tool_use',
  length: 'max_tokens',
  content_filter: 'refusal',
};

export function stopReasonFor(input: RenderInput): string {
  const finish = finishFor(input.answer);
  return stopReasons[finish] ?? finish;
}

/**
 * Usage as recorded, in Anthropic's convention: a tape's `input` includes the prompt-cache
 * reads and writes (OTel GenAI, src/normalize/usage.ts), Anthropic's input_tokens excludes
 * them (they are cache_read_input_tokens and cache_creation_input_tokens beside it), so they
 * are taken out again: the SDK sees the figures the provider sent.
 */
export function anthropicUsage(input: RenderInput): Obj {
  const t = input.tokens;
  const uncached = t.input === null ? 0 : Math.max(0, t.input - (t.cache_read ?? 0) - (t.cache_write ?? 0));
  return {
    input_tokens: uncached,
    output_tokens: t.output ?? 0,
    cache_creation_input_tokens: t.cache_write,
    cache_read_input_tokens: t.cache_read,
  };
}

/**
 * A tool_use block's input, which Anthropic's wire carries as an object: arguments recorded
 * as the text of one (OpenAI's way, or a layout's) are written as that text, so its numbers
 * and spacing reach the agent as recorded; a structured value as it is.
 */
function toolInput(args: JsonValue | undefined): JsonValue | RecordedJson {
  if (args === undefined) return {};
  if (typeof args !== 'string') return args;
  return RecordedJson.ofObject(args) ?? args;
}

/** The input's JSON text, as the input_json_delta pieces spell it. */
function toolInputText(args: JsonValue | undefined): string {
  const input = toolInput(args);
  return input instanceof RecordedJson ? input.text : renderJson(input);
}

function contentBlocks(input: RenderInput): Obj[] {
  const blocks: Obj[] = [];
  if (input.answer.text !== null) blocks.push({ type: 'text', text: input.answer.text });
  input.answer.toolCalls.forEach((call, i) => {
    blocks.push({
      type: 'tool_use',
      id: toolCallIdFor(input, i, 'toolu_'),
      name: call.name,
      input: toolInput(call.arguments),
    });
  });
  return blocks;
}

export function renderAnthropic(input: RenderInput): Rendered {
  return input.stream ? renderStream(input) : renderPlain(input);
}

function messageShell(input: RenderInput, content: Obj[], stopReason: string | null, usage: Obj): Obj {
  return {
    id: responseIdFor(input, 'msg_'),
    type: 'message',
    role: 'assistant',
    model: modelFor(input),
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
}

function renderPlain(input: RenderInput): Rendered {
  const body = new BoundedBody(input.maxBytes);
  body.json(messageShell(input, contentBlocks(input), stopReasonFor(input), anthropicUsage(input)));
  return { contentType: 'application/json', body: body.toBuffer() };
}

function renderStream(input: RenderInput): Rendered {
  const body = new BoundedBody(input.maxBytes);
  const event = (data: Obj): void => {
    body.push(`event: ${data.type as string}\ndata: `);
    body.json(data);
    body.push('\n\n');
  };
  const usage = anthropicUsage(input);
  event({ type: 'message_start', message: messageShell(input, [], null, { ...usage, output_tokens: 0 }) });
  let index = 0;
  if (input.answer.text !== null) {
    event({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const text of chunkText(input.answer.text)) {
      event({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    }
    event({ type: 'content_block_stop', index });
    index++;
  }
  input.answer.toolCalls.forEach((call, i) => {
    const block = { type: 'tool_use', id: toolCallIdFor(input, i, 'toolu_'), name: call.name, input: {} };
    event({ type: 'content_block_start', index, content_block: block });
    const json = toolInputText(call.arguments); // parses back to exactly the plain input
    for (const partial_json of chunkText(json)) {
      event({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
    }
    event({ type: 'content_block_stop', index });
    index++;
  });
  // message_delta usage totals overwrite the running ones, so it carries every count
  event({ type: 'message_delta', delta: { stop_reason: stopReasonFor(input), stop_sequence: null }, usage });
  event({ type: 'message_stop' });
  return { contentType: 'text/event-stream; charset=utf-8', body: body.toBuffer() };
}
