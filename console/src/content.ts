/**
 * Stored content on a page: messages by role, tool calls paired with their results, JSON
 * indented, long text collapsed behind a <details> (keyboard-operable, no script needed),
 * and offloaded values (`{"$payload": …}`) as a button that loads them when asked.
 */
import { h } from './dom.js';
import { pretty } from './format.js';
import type { Message, ToolCall } from './types.js';

/** Longer than this (characters or lines) is collapsed. */
const COLLAPSE_CHARS = 1200;
const COLLAPSE_LINES = 24;

export type LoadOffloaded = () => Promise<unknown>;

export function isPayloadRef(value: unknown): value is { $payload: string } {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.keys(value).length === 1 &&
    typeof (value as { $payload?: unknown }).$payload === 'string'
  );
}

export function containsPayloadRef(value: unknown): boolean {
  if (isPayloadRef(value)) return true;
  return Array.isArray(value) && value.some(isPayloadRef);
}

/** A block of text, collapsed when long. */
export function textBlock(text: string, label: string): HTMLElement {
  const pre = h('pre', { class: 'text' }, text);
  const lines = text.split('\n').length;
  if (text.length <= COLLAPSE_CHARS && lines <= COLLAPSE_LINES) return pre;
  const preview = text.slice(0, 160).replace(/\s+/g, ' ');
  return h(
    'details',
    { class: 'long' },
    h(
      'summary',
      null,
      `${label}: ${text.length.toLocaleString('en')} characters, ${lines} lines — `,
      h('span', { class: 'preview' }, preview),
      '…',
    ),
    pre,
  );
}

export function valueBlock(value: unknown, label: string): HTMLElement {
  if (value === null || value === undefined) return h('p', { class: 'absent' }, `${label}: not recorded`);
  return textBlock(pretty(value), label);
}

/** A button that loads an offloaded value and puts what it renders in its place. */
export function offloadedBlock(
  ref: string,
  label: string,
  load: LoadOffloaded,
  render: (value: unknown) => Node,
): HTMLElement {
  const holder = h('div', { class: 'offloaded' });
  const button = h('button', { type: 'button' }, `Load offloaded ${label} (${ref.slice(0, 19)}…)`);
  button.addEventListener('click', async () => {
    button.disabled = true;
    button.textContent = `Loading ${label}…`;
    try {
      const value = await load();
      if (isPayloadRef(value)) {
        holder.replaceChildren(
          h(
            'p',
            { class: 'absent' },
            `The ${label} stays offloaded: it is past the server's --tape-max-bytes budget or cannot be read.`,
          ),
        );
      } else {
        holder.replaceChildren(render(value));
      }
    } catch (error) {
      button.disabled = false;
      button.textContent = `Load offloaded ${label} (failed: ${(error as Error).message}; try again)`;
    }
  });
  holder.append(h('p', { class: 'absent' }, `The ${label} is stored apart (${ref}).`), button);
  return holder;
}

function messageContent(content: unknown): Node | null {
  if (content === undefined || content === null) return null;
  if (typeof content === 'string') return textBlock(pretty(content), 'content');
  if (Array.isArray(content)) {
    return h(
      'div',
      { class: 'parts' },
      content.map((part) => {
        const text = (part as { text?: unknown })?.text;
        return typeof text === 'string' ? textBlock(text, 'text') : textBlock(pretty(part), 'part');
      }),
    );
  }
  return textBlock(pretty(content), 'content');
}

function toolCallBlock(call: ToolCall, result: Message | undefined): HTMLElement {
  return h(
    'div',
    { class: 'tool-call' },
    h(
      'div',
      { class: 'tool-call-head' },
      h('span', { class: 'label' }, 'calls '),
      h('code', null, call.name),
      call.id ? h('span', { class: 'call-id' }, ` ${call.id}`) : null,
    ),
    call.arguments === undefined
      ? h('p', { class: 'absent' }, 'arguments not recorded')
      : textBlock(pretty(call.arguments), 'arguments'),
    result
      ? h(
          'div',
          { class: 'tool-result' },
          h('div', { class: 'label' }, `result (${result.tool_call_id})`),
          messageContent(result.content),
        )
      : null,
  );
}

/**
 * A message list. A tool result whose call is in the same list is shown under that call;
 * one whose call is not (the call was in an earlier model call's answer) stands alone.
 */
export function messageList(messages: Message[], load: LoadOffloaded | null): HTMLElement {
  const results = new Map<string, Message>();
  const callIds = new Set<string>();
  for (const m of messages) for (const c of m.tool_calls ?? []) if (c.id) callIds.add(c.id);
  for (const m of messages)
    if (m.role === 'tool' && m.tool_call_id && callIds.has(m.tool_call_id)) results.set(m.tool_call_id, m);
  const list = h('ol', { class: 'messages' });
  (messages as unknown[]).forEach((m, position) => {
    if (isPayloadRef(m)) {
      // The loaded value is the whole list again (the messages before this one included).
      const rest = (v: unknown) => renderValue(Array.isArray(v) ? v.slice(position) : v, null, 'messages');
      list.append(
        h(
          'li',
          { class: 'message' },
          load ? offloadedBlock(m.$payload, 'messages', load, rest) : valueBlock(m, 'messages'),
        ),
      );
      return;
    }
    const message = m as Message;
    if (message.role === 'tool' && message.tool_call_id && results.get(message.tool_call_id) === message) return;
    list.append(
      h(
        'li',
        { class: `message role-${message.role}` },
        h(
          'div',
          { class: 'role' },
          message.role,
          message.tool_call_id ? h('span', { class: 'call-id' }, ` for ${message.tool_call_id}`) : null,
          message.finish_reason ? h('span', { class: 'finish' }, ` · ${message.finish_reason}`) : null,
        ),
        messageContent(message.content),
        (message.tool_calls ?? []).map((c) => toolCallBlock(c, c.id ? results.get(c.id) : undefined)),
      ),
    );
  });
  return list;
}

function looksLikeMessages(value: unknown): value is Message[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every(
      (m) => isPayloadRef(m) || (typeof m === 'object' && m !== null && typeof (m as Message).role === 'string'),
    )
  );
}

/** A request or response: a message list, an offloaded value, or any JSON value. */
export function renderValue(value: unknown, load: LoadOffloaded | null, label: string): Node {
  if (isPayloadRef(value)) {
    return load
      ? offloadedBlock(value.$payload, label, load, (v) => renderValue(v, null, label))
      : valueBlock(value, label);
  }
  if (looksLikeMessages(value)) return messageList(value, load);
  return valueBlock(value, label);
}
