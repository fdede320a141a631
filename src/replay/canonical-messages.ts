/**
 * @module replay/canonical-messages
 * Folds a message list, however it was spelled, into the canonical request messages that
 * strict matching digests (DESIGN.md "Canonical shapes"): role, content, tool_call_id and
 * tool_calls [{id, name, arguments}]. finish_reason is not part of a request comparison.
 *
 * Accepted spellings, so both sides of a comparison fold to the same bytes:
 * - canonical messages (what a tape holds);
 * - OpenAI chat messages: content string or parts, tool_calls [{id, type, function}],
 *   role "tool" with tool_call_id, role "developer" (read as system);
 * - Anthropic messages: content string or blocks; tool_use blocks become tool_calls,
 *   tool_result blocks become role "tool" messages in place;
 * - OTel GenAI parts messages: {role, parts: [text | tool_call | tool_call_response]}.
 * Rules: empty content is missing content; a single text part is a content string; text that
 * parses as a JSON object or array is read as JSON; tool-call arguments compare as JSON.
 */
import type { JsonValue, Message, ToolCall } from '../normalize/step.js';

type Obj = { [key: string]: unknown };

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Text that parses as a JSON object or array is that value; any other text stays text. */
export function readJsonShaped(text: string): JsonValue {
  const first = text.trimStart()[0];
  if (first !== '{' && first !== '[') return text;
  try {
    return JSON.parse(text) as JsonValue;
  } catch {
    return text;
  }
}

const roles: Record<string, Message['role']> = {
  system: 'system', developer: 'system', user: 'user', assistant: 'assistant', tool: 'tool', function: 'tool',
};

/** Block types that mark an array as content parts rather than a JSON value read from text. */
const partTypes = new Set([
  'text', 'input_text', 'output_text', 'image', 'image_url', 'input_audio', 'file', 'document',
  'tool_use', 'tool_result', 'tool_call', 'tool_call_response', 'thinking', 'redacted_thinking',
]);

export function isPartList(v: unknown): v is Obj[] {
  return Array.isArray(v) && v.length > 0 && v.every((p) => isObject(p) && typeof p.type === 'string' && partTypes.has(p.type));
}

/** Whether a list element says anything a message says (role, content, tool call or tool result). */
export function isMessageLike(v: unknown): v is Obj {
  if (!isObject(v)) return false;
  return 'role' in v || 'content' in v || 'parts' in v || 'tool_calls' in v || 'tool_call_id' in v;
}

/** Canonical content from a string, parts, or a JSON value; undefined when it says nothing. */
export function normalizeContent(content: unknown): JsonValue | undefined {
  if (content === undefined || content === null) return undefined;
  if (typeof content === 'string') return content === '' ? undefined : readJsonShaped(content);
  if (Array.isArray(content)) {
    if (content.length === 0) return undefined;
    if (!isPartList(content)) return content as JsonValue;
    const parts = content.map(normalizePart).filter((p): p is JsonValue => p !== undefined);
    return partsToContent(parts);
  }
  return content as JsonValue;
}

function partsToContent(parts: JsonValue[]): JsonValue | undefined {
  if (parts.length === 0) return undefined;
  if (parts.length === 1 && isObject(parts[0]) && parts[0].type === 'text') {
    return normalizeContent(parts[0].text);
  }
  return parts;
}

/** A content part in canonical spelling: text parts as {type:"text", text}; others as sent, minus cache hints. */
function normalizePart(part: Obj): JsonValue | undefined {
  const type = part.type as string;
  if (type === 'text' || type === 'input_text' || type === 'output_text') {
    const text = typeof part.text === 'string' ? part.text : typeof part.content === 'string' ? part.content : '';
    return text === '' ? undefined : { type: 'text', text };
  }
  if (type === 'thinking' || type === 'redacted_thinking') return undefined;
  const { cache_control: _ignored, ...rest } = part;
  return rest as JsonValue;
}

function normalizeArguments(args: unknown): JsonValue | undefined {
  if (args === undefined || args === null) return undefined;
  if (typeof args === 'string') return args === '' ? undefined : readJsonShaped(args);
  return args as JsonValue;
}

/** A tool call in canonical spelling, from OpenAI {id, function:{name, arguments}}, Anthropic tool_use or canonical. */
export function normalizeToolCall(call: Obj): ToolCall {
  const fn = isObject(call.function) ? call.function : undefined;
  const name = fn ? fn.name : call.name;
  const args = fn ? fn.arguments : 'input' in call ? call.input : call.arguments;
  const out: ToolCall = { name: typeof name === 'string' ? name : '' };
  if (typeof call.id === 'string' && call.id !== '') out.id = call.id;
  const a = normalizeArguments(args);
  if (a !== undefined) out.arguments = a;
  return out;
}

function toolResult(id: unknown, content: unknown): Message {
  const m: Message = { role: 'tool' };
  const c = normalizeContent(content);
  if (c !== undefined) m.content = c;
  if (typeof id === 'string' && id !== '') m.tool_call_id = id;
  return m;
}

/**
 * One message in any accepted spelling, as zero or more canonical messages (a user message
 * holding tool results becomes one tool message per result, in place).
 */
export function normalizeMessage(m: Obj): Message[] {
  const role = (typeof m.role === 'string' ? roles[m.role] ?? m.role : undefined) as Message['role'] | undefined;
  const blocks = Array.isArray(m.parts) ? m.parts : isPartList(m.content) ? m.content : undefined;
  const out: Message[] = [];
  let parts: JsonValue[] = [];
  let calls: ToolCall[] = [];
  let used = false;
  const flush = (force: boolean): void => {
    if (!force && parts.length === 0 && calls.length === 0) return;
    const msg = {} as Message;
    if (role !== undefined) msg.role = role;
    const content = blocks ? partsToContent(parts) : normalizeContent(m.content);
    if (content !== undefined) msg.content = content;
    if (typeof m.tool_call_id === 'string' && m.tool_call_id !== '') msg.tool_call_id = m.tool_call_id;
    if (calls.length > 0) msg.tool_calls = calls;
    out.push(msg);
    parts = [];
    calls = [];
    used = true;
  };
  if (Array.isArray(m.tool_calls)) calls = m.tool_calls.filter(isObject).map(normalizeToolCall);
  for (const raw of blocks ?? []) {
    if (!isObject(raw)) continue;
    const type = raw.type;
    if (type === 'tool_use' || type === 'tool_call') {
      calls.push(normalizeToolCall(raw));
    } else if (type === 'tool_result' || type === 'tool_call_response') {
      flush(false);
      out.push(type === 'tool_result' ? toolResult(raw.tool_use_id, raw.content) : toolResult(raw.id, raw.response));
      used = true;
    } else {
      const p = normalizePart(raw);
      if (p !== undefined) parts.push(p);
    }
  }
  flush(!used);
  return out;
}

export type MessageListResult = { ok: true; messages: Message[] } | { ok: false; index: number };

/** A whole list; refuses (with the element's index) a list holding something that is not a message. */
export function normalizeMessages(list: readonly unknown[]): MessageListResult {
  const messages: Message[] = [];
  for (let i = 0; i < list.length; i++) {
    const m = list[i];
    if (!isMessageLike(m)) return { ok: false, index: i };
    messages.push(...normalizeMessage(m));
  }
  return { ok: true, messages };
}
