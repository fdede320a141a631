/**
 * @module runs/chat-format
 * Canonical messages → the OpenAI chat fine-tuning format, one `{"messages": [...]}` per run,
 * and the order check every line must pass before it is written. Pure.
 *
 * - system / user: `{role, content: string}`; assistant: `{role, content: string | null,
 *   tool_calls?: [{id, type: "function", function: {name, arguments: <JSON string>}}]}`;
 *   tool: `{role: "tool", tool_call_id, content: string}`. Content that tapedeck holds as
 *   JSON (JSON-shaped text, docs/architecture.md "Messages") is written back as compact JSON text.
 * - A tool call without an id gets `call_<n>` (n counts the run's id-less calls from 1,
 *   skipping ids the run already uses), and a tool result without one takes the id of the
 *   call it answers, in order: every tool message references a call of the assistant turn
 *   just before it.
 * - Order (checkChatOrder): system messages first, then a user turn; an assistant turn with
 *   tool calls is followed by exactly one tool message per call (any order) before the next
 *   turn; the last message is an assistant answer without tool calls. Turns of one role may
 *   follow each other (a user turn split in two, a follow-up before the answer): the chat
 *   format and most trainers accept them, so they are written as recorded, unless
 *   `mergeUserTurns` asks for consecutive user turns joined into one (their texts separated
 *   by a blank line), for trainers that need user and assistant turns to alternate.
 */
import type { Message } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { contentText } from './messages.js';

export interface ChatToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ChatToolCall[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export type ChatResult = { messages: ChatMessage[] } | { invalid: string };

const argumentsText = (args: JsonValue | undefined): string =>
  args === undefined || args === null ? '{}' : typeof args === 'string' ? args : JSON.stringify(args);

export interface ChatFormatOptions {
  /** join consecutive user turns into one; default false (written as recorded) */
  mergeUserTurns?: boolean;
}

export function toChatMessages(conversation: readonly Message[], options: ChatFormatOptions = {}): ChatResult {
  const used = new Set<string>();
  for (const m of conversation) {
    if (m.tool_call_id) used.add(m.tool_call_id);
    for (const c of m.tool_calls ?? []) if (c.id) used.add(c.id);
  }
  let next = 0;
  const freshId = (): string => {
    let id: string;
    do id = `call_${++next}`;
    while (used.has(id));
    used.add(id);
    return id;
  };
  const out: ChatMessage[] = [];
  let pending: string[] = [];
  for (const m of conversation) {
    if (m.role === 'tool') {
      const id = m.tool_call_id ?? pending[0];
      if (id === undefined) return { invalid: 'a tool result follows no tool call' };
      pending = pending.filter((p) => p !== id);
      out.push({ role: 'tool', tool_call_id: id, content: contentText(m.content) ?? '' });
      continue;
    }
    pending = [];
    if (m.role === 'assistant') {
      const calls = (m.tool_calls ?? []).map((c) => ({
        id: c.id ?? freshId(),
        type: 'function' as const,
        function: { name: c.name, arguments: argumentsText(c.arguments) },
      }));
      pending = calls.map((c) => c.id);
      out.push({ role: 'assistant', content: contentText(m.content), ...(calls.length ? { tool_calls: calls } : {}) });
      continue;
    }
    const content = contentText(m.content) ?? '';
    const previous = out[out.length - 1];
    if (m.role === 'user' && options.mergeUserTurns && previous?.role === 'user') {
      if (content !== '') previous.content = previous.content === '' ? content : `${previous.content}\n\n${content}`;
      continue;
    }
    out.push({ role: m.role === 'system' ? 'system' : 'user', content });
  }
  const problem = checkChatOrder(out);
  return problem ? { invalid: problem } : { messages: out };
}

/** Why the messages are not a valid chat training example, or null when they are. */
export function checkChatOrder(messages: readonly ChatMessage[]): string | null {
  let i = 0;
  while (i < messages.length && messages[i].role === 'system') i++;
  if (messages[i]?.role !== 'user') return 'the conversation does not start with a user turn';
  for (; i < messages.length; i++) {
    const m = messages[i];
    if (m.role === 'system') return `a system message at position ${i}, after the conversation began`;
    if (m.role === 'tool') return `a tool result at position ${i} answers no tool call of the turn before it`;
    if (m.role === 'user') {
      if (m.content === '') return `an empty user turn at position ${i}`;
      continue;
    }
    if (!m.tool_calls?.length) {
      if (m.content === null || m.content === '') return `an empty assistant turn at position ${i}`;
      continue;
    }
    const open = new Set(m.tool_calls.map((c) => c.id));
    if (open.size !== m.tool_calls.length) return `tool call ids repeat in the assistant turn at position ${i}`;
    while (messages[i + 1]?.role === 'tool') {
      const t = messages[++i] as Extract<ChatMessage, { role: 'tool' }>;
      if (!open.delete(t.tool_call_id))
        return `the tool result at position ${i} references ${JSON.stringify(t.tool_call_id)}, not a pending call`;
    }
    if (open.size) return `tool calls ${[...open].map((id) => JSON.stringify(id)).join(', ')} have no result`;
  }
  const last = messages[messages.length - 1];
  if (last.role !== 'assistant' || last.tool_calls?.length)
    return 'the conversation does not end with an assistant answer';
  return null;
}
