/**
 * @module replay/canonical-messages
 * The canonical request messages strict matching digests (docs/architecture.md "Messages"):
 * role, content, tool_call_id and tool_calls [{id, name, arguments}]. finish_reason is not part
 * of a request comparison.
 *
 * There is one reading of "provider messages → canonical messages", the normalizer's
 * (src/normalize/provider-messages.ts, messages.ts, genai-parts.ts): the same code that turned
 * the recorded spans into the tape reads the agent's request here, so both sides fold by the
 * same rules (text parts joined, parts in canonical shape, reasoning kept, tool arguments as
 * any JSON value, unknown roles as user, …). What this module adds is replay-specific:
 * - an agent's request body is refused, naming the element, when its list holds something
 *   that is not a message (the normalizer would drop it, comparing as if it were not there);
 * - a recorded prompt is already canonical (the normalizer wrote it): a message in the
 *   canonical shape is taken as it is, so the recorded digest is the tape's request_digest
 *   (reading canonical content again need not be idempotent: parts folded once must not be
 *   folded twice). A recorded element in another spelling (OTel GenAI parts,
 *   provider-shaped) is read by the normalizer's readers.
 */
import type { Message } from '../normalize/step.js';
import { fromGenAiMessage } from '../normalize/genai-parts.js';
import { fromProviderMessage, messagesFromRequestBody } from '../normalize/provider-messages.js';

type Obj = { [key: string]: unknown };

export function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Whether a list element says anything a message says (role, content, tool call or tool result). */
export function isMessageLike(v: unknown): v is Obj {
  if (!isObject(v)) return false;
  return 'role' in v || 'content' in v || 'parts' in v || 'tool_calls' in v || 'tool_call_id' in v;
}

export type MessageListResult = { ok: true; messages: Message[] } | { ok: false; index: number };

/** The index of the first element that is not a message, or -1. */
function firstNonMessage(list: readonly unknown[]): number {
  for (let i = 0; i < list.length; i++) if (!isMessageLike(list[i])) return i;
  return -1;
}

/** Request messages never carry a finish reason: an input list that recorded one compares without it. */
function withoutFinish(m: Message): Message {
  if (m.finish_reason === undefined) return m;
  const { finish_reason: _finish, ...rest } = m;
  return rest;
}

/**
 * An agent's request body (OpenAI chat completions or Anthropic messages, whose `system`
 * parameter is a leading system message) → canonical messages, by the normalizer's own
 * provider reader. Refuses a body with no messages list, or a list holding a non-message.
 */
export function requestBodyMessages(body: Obj): MessageListResult | { ok: false; index: null } {
  if (!Array.isArray(body.messages)) return { ok: false, index: null };
  const bad = firstNonMessage(body.messages);
  if (bad >= 0) return { ok: false, index: bad };
  const messages = messagesFromRequestBody(body) ?? [];
  return { ok: true, messages: messages.map(withoutFinish) };
}

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);
const MESSAGE_KEYS = new Set(['role', 'content', 'tool_call_id', 'is_error', 'tool_calls', 'finish_reason']);
const CALL_KEYS = new Set(['id', 'name', 'arguments']);

const nonEmptyString = (v: unknown): boolean => typeof v === 'string' && v !== '';

function isCanonicalCall(c: unknown): boolean {
  if (!isObject(c) || !nonEmptyString(c.name)) return false;
  for (const k in c) if (!CALL_KEYS.has(k)) return false;
  if ('id' in c && !nonEmptyString(c.id)) return false;
  return !('arguments' in c) || (c.arguments !== null && c.arguments !== undefined);
}

/**
 * A message exactly as the normalizer writes one: a canonical role, only canonical keys, and
 * none that carries nothing; tool calls as {id, name, arguments}.
 */
export function isCanonicalMessage(m: Obj): boolean {
  if (typeof m.role !== 'string' || !ROLES.has(m.role)) return false;
  for (const k in m) if (!MESSAGE_KEYS.has(k)) return false;
  if ('content' in m) {
    const c = m.content;
    if (c === null || c === undefined || c === '') return false;
    if (Array.isArray(c) && c.length === 0) return false;
  }
  if ('tool_call_id' in m && (!nonEmptyString(m.tool_call_id) || m.role !== 'tool')) return false;
  if ('is_error' in m && (m.is_error !== true || m.role !== 'tool')) return false;
  if (
    'tool_calls' in m &&
    !(Array.isArray(m.tool_calls) && m.tool_calls.length > 0 && m.tool_calls.every(isCanonicalCall))
  )
    return false;
  return !('finish_reason' in m) || nonEmptyString(m.finish_reason);
}

/** One recorded element: canonical as it is; OTel GenAI parts or a provider message through the normalizer. */
function recordedMessage(m: Obj): Message[] {
  if (isCanonicalMessage(m)) return [m as unknown as Message];
  if (Array.isArray(m.parts)) return fromGenAiMessage(m);
  return fromProviderMessage(m);
}

/**
 * A recorded prompt's message list (references already resolved) → canonical request
 * messages; refuses, with the element's index, a list holding something that is not a message.
 */
export function normalizeMessages(list: readonly unknown[]): MessageListResult {
  const bad = firstNonMessage(list);
  if (bad >= 0) return { ok: false, index: bad };
  const messages: Message[] = [];
  for (const m of list as Obj[]) for (const msg of recordedMessage(m)) messages.push(withoutFinish(msg));
  return { ok: true, messages };
}
