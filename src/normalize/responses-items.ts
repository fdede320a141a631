/**
 * @module normalize/responses-items
 * OpenAI's Responses API in canonical messages: a request's `input` (a string, or a list of
 * items) with its `instructions`, and a response's `output` items. Instrumentations record
 * these bodies whole (openinference-instrumentation-openai-agents: input.value is the input
 * item list, output.value the Response), and only the body says how the call ended.
 *
 * Items, https://platform.openai.com/docs/api-reference/responses/object:
 * - a message ({role, content} with or without type "message"): content is text or parts
 *   (input_text, output_text, input_image, refusal);
 * - function_call {call_id, name, arguments} and function_call_output {call_id, output}: a
 *   turn's calls are one assistant message with its tool calls (as chat completions have it,
 *   and as the other layouts record the same call), each output a tool message;
 * - reasoning {summary: [{text}]}: the reasoning part of the assistant message it precedes;
 * - other items (web_search_call, file_search_call, mcp_*, ...) carry no message.
 */
import type { Message } from './step.js';
import type { JsonValue } from '../json/json-value.js';
import { asObject } from './attrs.js';
import { fromProviderMessage } from './provider-messages.js';

type Obj = { [k: string]: JsonValue };

const ITEM_TYPES = new Set(['message', 'function_call', 'function_call_output', 'reasoning']);
const RESPONSES_PARTS = new Set(['input_text', 'output_text', 'input_image', 'input_file']);

/** Whether a list is Responses input items rather than chat messages. */
export function isResponsesInput(v: unknown): v is JsonValue[] {
  if (!Array.isArray(v) || v.length === 0) return false;
  let specific = false;
  for (const raw of v) {
    const item = asObject(raw);
    if (!item) return false;
    const type = item.type;
    if (typeof type === 'string') {
      if (ITEM_TYPES.has(type) || type.endsWith('_call') || type.endsWith('_call_output')) specific = true;
      else return false;
    } else if (typeof item.role !== 'string') {
      return false;
    } else if (
      Array.isArray(item.content) &&
      item.content.some((p) => RESPONSES_PARTS.has(String(asObject(p)?.type)))
    ) {
      specific = true;
    }
  }
  return specific;
}

/** Whether a value is (a dump of) a Response: object "response", or a resp_ id. */
export function isResponse(v: unknown): boolean {
  const b = asObject(v);
  return b !== undefined && (b.object === 'response' || (typeof b.id === 'string' && b.id.startsWith('resp_')));
}

/** A Response object ({object: "response", output: [...]}) as its answer; undefined when it is not one. */
export function messagesFromResponse(body: unknown): Message[] | undefined {
  const b = asObject(body);
  if (b?.object !== 'response' || !Array.isArray(b.output)) return undefined;
  const messages = messagesFromItems(b.output);
  const answer = messages.filter((m) => m.role === 'assistant').at(-1);
  const finish = finishReasonOf(b, messages);
  if (answer && finish !== undefined) answer.finish_reason = finish;
  return messages;
}

/** A request's input (text or items) after its instructions. */
export function messagesFromResponsesInput(input: unknown, instructions?: unknown): Message[] {
  const system =
    typeof instructions === 'string' && instructions !== ''
      ? fromProviderMessage({ role: 'system', content: instructions })
      : [];
  if (typeof input === 'string') return [...system, ...fromProviderMessage({ role: 'user', content: input })];
  return [...system, ...messagesFromItems(Array.isArray(input) ? input : [])];
}

function messagesFromItems(items: JsonValue[]): Message[] {
  const out: Message[] = [];
  // The assistant turn being built: its message (if any), calls and reasoning, until a
  // message of another role or a function output ends it.
  let turn: { content: JsonValue[]; calls: JsonValue[] } | null = null;
  const endTurn = (): void => {
    if (!turn) return;
    out.push(
      ...fromProviderMessage({
        role: 'assistant',
        content: turn.content.length ? turn.content : null,
        tool_calls: turn.calls,
      }),
    );
    turn = null;
  };
  for (const raw of items) {
    const item = asObject(raw) as Obj | undefined;
    if (!item) continue;
    const type = typeof item.type === 'string' ? item.type : 'message';
    if (type === 'message' && item.role === 'assistant') {
      turn ??= { content: [], calls: [] };
      turn.content.push(...contentParts(item.content));
    } else if (type === 'message') {
      endTurn();
      out.push(...fromProviderMessage({ role: item.role ?? 'user', content: item.content }));
    } else if (type === 'function_call') {
      turn ??= { content: [], calls: [] };
      turn.calls.push({
        id: item.call_id ?? null,
        type: 'function',
        function: { name: item.name ?? null, arguments: item.arguments ?? null },
      });
    } else if (type === 'reasoning') {
      turn ??= { content: [], calls: [] };
      for (const s of Array.isArray(item.summary) ? item.summary : []) {
        const text = asObject(s)?.text;
        if (typeof text === 'string' && text !== '') turn.content.push({ type: 'reasoning', text });
      }
    } else if (type === 'function_call_output') {
      endTurn();
      out.push(...fromProviderMessage({ role: 'tool', tool_call_id: item.call_id, content: item.output }));
    }
  }
  endTurn();
  return out;
}

function contentParts(content: JsonValue | undefined): JsonValue[] {
  if (typeof content === 'string') return content === '' ? [] : [{ type: 'text', text: content }];
  return Array.isArray(content) ? content : [];
}

/**
 * How the call ended: a function call asked for → tool_calls; incomplete → its reason
 * (max_output_tokens → length, content_filter); completed → stop.
 */
function finishReasonOf(b: Obj, messages: Message[]): string | undefined {
  if (messages.some((m) => m.role === 'assistant' && m.tool_calls !== undefined)) return 'tool_calls';
  if (b.status === 'incomplete') {
    const reason = asObject(b.incomplete_details)?.reason;
    return reason === 'max_output_tokens' ? 'length' : typeof reason === 'string' ? reason : undefined;
  }
  return b.status === 'completed' ? 'stop' : undefined;
}
