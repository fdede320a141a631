/**
 * @module normalize/genai-parts
 * OTel GenAI (v1.37+) message lists → canonical messages. Shared by the OTel GenAI dialect,
 * Traceloop ≥ 0.27 (same attributes), the Anthropic SDK's built-in spans and the
 * gen_ai.client.inference.operation.details log event.
 *
 *   InputMessages  = [{role, parts: [...], name?}]
 *   OutputMessages = [{role, parts: [...], finish_reason}]
 *   SystemInstructions = [parts]  (a raw string in @opentelemetry/instrumentation-openai's Responses spans)
 */
import type { Message, ToolCall } from './step.js';
import type { JsonValue } from '../json/json-value.js';
import { asObject, jsonAttr } from './attrs.js';
import type { AttributeValue } from '../spans/span-record.js';
import { canonicalContent, canonicalPart, makeMessage, makeToolCall, type Part } from './messages.js';
import { fromProviderMessage, providerToolCall } from './provider-messages.js';

type Obj = { [k: string]: JsonValue };

/**
 * A tool_call_response's payload. The schema says `response`; the registry's example says
 * `result`; the Anthropic SDK writes the tool_result content blocks ([{type:"text",text}]).
 */
function responseContent(p: Obj): JsonValue | undefined {
  return canonicalContent(p.response !== undefined ? p.response : p.result);
}

/**
 * The id that links a tool call to its result. @opentelemetry/instrumentation-openai's
 * Responses API parts carry the output item's id in `id` (fc_…, absent on input results) and
 * the call id the result answers in `call_id`: the call id is the link.
 */
function callId(p: Obj): JsonValue | undefined {
  if (typeof p.call_id === 'string' && p.call_id !== '') return p.call_id;
  // opentelemetry-instrumentation-openai-agents (contrib): tool_call_id / tool_name
  return p.id ?? p.tool_call_id;
}

/**
 * One GenAI message → canonical messages. tool_call_response parts become tool messages
 * (one per part, in order), whatever role carried them: Traceloop's Anthropic layout and the
 * Anthropic SDK put them in user messages.
 */
export function fromGenAiMessage(raw: unknown, fallbackFinish?: unknown, defaultRole = 'user'): Message[] {
  const m = asObject(raw);
  if (!m) return [];
  // `role` is required by the schema but not always written; an output message without one
  // is the model's answer, not a user turn.
  const role = m.role === undefined || m.role === null || m.role === '' ? defaultRole : m.role;
  // No parts but a content list: a provider's message as it is (Mastra's exporter passes on
  // the AI SDK's messages it does not convert: tool-call / tool-result parts beside others).
  if (!Array.isArray(m.parts) && Array.isArray(m.content))
    return fromProviderMessage({ ...m, role }, m.finish_reason ?? fallbackFinish);
  const parts = Array.isArray(m.parts) ? m.parts : [];
  // Older @traceloop/node-server-sdk AI SDK transforms wrote a message of tool-call or
  // tool-result parts as one text part holding their JSON.
  const packed = aiSdkPartsOfText(parts);
  if (packed) return fromProviderMessage({ role, content: packed }, m.finish_reason ?? fallbackFinish);
  const out: Message[] = [];
  let calls: (ToolCall | undefined)[] = [];
  let content: Part[] = [];
  let sawResponse = false;
  // What came before a tool_call_response: the user's text, or the assistant's calls it
  // answers (the OTel contrib OpenAI instrumentation puts a built-in tool's call and
  // response in one assistant message).
  const flush = (finishReason?: unknown) => {
    if (content.length || calls.length) out.push(makeMessage({ role, content, toolCalls: calls, finishReason }));
    content = [];
    calls = [];
  };
  for (const rawPart of parts) {
    const p = asObject(rawPart);
    if (!p) continue;
    // function_call: OpenLLMetry's google-generativeai instrumentation, Gemini's name for it
    if (p.type === 'tool_call' || p.type === 'function_call') {
      // @traceloop/node-server-sdk's AI SDK transform (ai-sdk-transformations.ts) nests the
      // call: {type: "tool_call", tool_call: {name, arguments}}.
      const nested = asObject(p.tool_call);
      calls.push(
        makeToolCall(callId(p) ?? nested?.id, p.name ?? nested?.name ?? p.tool_name, p.arguments ?? nested?.arguments),
      );
    } else if (p.type === 'tool_call_response') {
      flush();
      sawResponse = true;
      out.push(makeMessage({ role: 'tool', content: responseContent(p), toolCallId: callId(p) }));
    } else {
      const part = canonicalPart(p);
      if (part) content.push(part);
    }
  }
  // LiteLLM's OpenTelemetry callback keeps chat completions' tool_calls and tool_call_id on
  // the message beside its parts (read when the parts hold no call: some paths write both).
  if (calls.length === 0 && Array.isArray(m.tool_calls))
    for (const tc of m.tool_calls) calls.push(providerToolCall(tc));
  const finish = m.finish_reason !== undefined && m.finish_reason !== '' ? m.finish_reason : fallbackFinish;
  if (sawResponse) {
    flush(finish);
    return out;
  }
  // Older drafts and some SDKs put a plain `content` on the message instead of parts.
  const body = !parts.length && m.content !== undefined ? m.content : content;
  const toolCallId = typeof m.tool_call_id === 'string' && m.tool_call_id !== '' ? m.tool_call_id : undefined;
  out.push(makeMessage({ role, content: body, toolCalls: calls, finishReason: finish, toolCallId }));
  return out;
}

function aiSdkPartsOfText(parts: JsonValue[]): JsonValue[] | undefined {
  const only = parts.length === 1 ? asObject(parts[0]) : undefined;
  const text = only?.type === 'text' ? only.content : undefined;
  if (typeof text !== 'string' || !text.startsWith('[{"type":"tool-')) return undefined;
  const list = jsonAttr(text);
  return Array.isArray(list) && list.every((p) => /^tool-(call|result)$/.test(String(asObject(p)?.type)))
    ? list
    : undefined;
}

/** gen_ai.input.messages (JSON string or structured) → messages; undefined when absent/unreadable. */
export function genAiInput(value: AttributeValue | undefined): Message[] | undefined {
  if (typeof value === 'string') {
    const continued = recentInputs.continued(value);
    const resent = continued?.earlier ?? recentInputs.earlier(value);
    if (resent?.text.length === value.length) return [...resent.messages];
    if (resent) {
      const tail = messagesOf(jsonAttr(`[${continued ? continued.rest : value.slice(resent.text.length)}`));
      if (tail) return recentInputs.remember(value, resent, [...resent.messages, ...tail], continued?.closes);
    }
  }
  const out = messagesOf(jsonAttr(value));
  if (out && typeof value === 'string') recentInputs.remember(value, undefined, out);
  return out;
}

/**
 * Texts about to be read that are known to continue an earlier one: `text` is `earlier` with
 * its closing bracket replaced by `tail` (`,`, then what it adds). The derive worker builds
 * them so from the tails it is sent (derive/resent-texts.ts), of pieces: told so, the reader
 * takes the new elements from `tail`, and neither compares `text` nor makes it one flat copy.
 * Each call replaces the ones before.
 */
export function expectContinuations(continuations: readonly Continuation[]): void {
  recentInputs.continuations = continuations;
}

export interface Continuation {
  text: string;
  earlier: string;
  tail: string;
}

function messagesOf(list: JsonValue | undefined): Message[] | undefined {
  if (!Array.isArray(list)) return undefined;
  const out: Message[] = [];
  for (const m of list) out.push(...fromGenAiMessage(m));
  return out;
}

/**
 * The last few gen_ai.input.messages texts read, with their messages. An agent resends its
 * whole history on every call, so a call's text is most often an earlier call's with the new
 * messages appended: `[a,b]` then `[a,b,c,d]`. Such a text is read from where the earlier one
 * ended (its elements are the earlier ones' and the tail's, each read on its own), and its
 * first messages are the very objects the earlier call read, which the message store's
 * encoding recognises (derive.ts inlineMessages) rather than writing and hashing them again.
 * The messages are never changed once read (the request is stored as read).
 */
class RecentInputs {
  private readonly entries: RecentInput[] = [];
  private chars = 0;
  continuations: readonly Continuation[] = [];

  /**
   * When `text` is one of the continuations expected and the text it continues is remembered:
   * that one, the new elements' text (after the comma) and whether `text` ends in `]`.
   */
  continued(text: string): { earlier: RecentInput; rest: string; closes: boolean } | undefined {
    // (lengths first: two texts of one length are compared whole)
    const c = this.continuations.find((c) => c.text.length === text.length && c.text === text);
    if (c?.tail.charCodeAt(0) !== 44) return undefined; // continues with a comma
    const earlier = this.entries.find((e) => e.text.length === c.earlier.length && e.text === c.earlier);
    if (!earlier) return undefined;
    return { earlier, rest: c.tail.slice(1), closes: c.tail.charCodeAt(c.tail.length - 1) === 93 };
  }

  /** `text` itself if remembered (it is read more than once), else the longest text remembered that it extends by more elements. */
  earlier(text: string): RecentInput | undefined {
    let best: RecentInput | undefined;
    for (const e of this.entries) {
      if (e.text.length === text.length && e.text === text) return e;
      const end = e.text.length - 1;
      // e.text is `[...]` with at least one element; text continues it with `,` where it closed
      if (
        text.length > e.text.length &&
        (best === undefined || e.text.length > best.text.length) &&
        text.charCodeAt(end) === 44 &&
        // equality of two slices compares their memory; startsWith goes character by character
        text.slice(0, end) === e.text.slice(0, end)
      )
        best = e;
    }
    return best;
  }

  /**
   * Remembers `text` (in place of `replaced`, the text it extends), the oldest forgotten past
   * the bounds. `closes`: whether a text continuing `replaced` ends in `]`, when known.
   */
  remember(text: string, replaced: RecentInput | undefined, messages: Message[], closes?: boolean): Message[] {
    const at = replaced ? this.entries.indexOf(replaced) : -1;
    if (at >= 0) this.forget(at);
    const bracketed = closes ?? (text.charCodeAt(text.length - 1) === 93 && text.charCodeAt(0) === 91);
    if (messages.length === 0 || !bracketed) return messages;
    if (text.length > RECENT_CHARS) return messages;
    while (this.entries.length === RECENT_INPUTS || this.chars + text.length > RECENT_CHARS) this.forget(0);
    this.entries.push({ text, messages });
    this.chars += text.length;
    return messages;
  }

  private forget(at: number): void {
    this.chars -= this.entries[at].text.length;
    this.entries.splice(at, 1);
  }
}

interface RecentInput {
  text: string;
  messages: Message[];
}

/** Conversations whose next call is recognised: more than a worker's chunk interleaves, as a rule. */
const RECENT_INPUTS = 16;
/** The characters of the texts remembered, at most: their messages hold about as much again. */
const RECENT_CHARS = 4 * 1024 * 1024;

const recentInputs = new RecentInputs();

/**
 * gen_ai.output.messages → answer messages. finish_reasons fills a message's missing
 * finish_reason (the Anthropic SDK writes none in the message; Traceloop writes "" when
 * streaming), position by position.
 */
export function genAiOutput(
  value: AttributeValue | undefined,
  finishReasons: readonly unknown[] = [],
): Message[] | undefined {
  const list = jsonAttr(value);
  if (!Array.isArray(list)) return undefined;
  const out: Message[] = [];
  for (let i = 0; i < list.length; i++) out.push(...fromGenAiMessage(list[i], finishReasons[i], 'assistant'));
  return out;
}

/** gen_ai.system_instructions (parts, or a raw string) → a leading system message, or none. */
export function genAiSystem(value: AttributeValue | undefined): readonly Message[] {
  if (typeof value !== 'string' || value.length > RECENT_SYSTEM_CHARS) return systemOf(value);
  const known = recentSystems.get(value);
  if (known) return known;
  const read = Object.freeze(systemOf(value));
  if (recentSystems.size === RECENT_SYSTEMS) recentSystems.delete(recentSystems.keys().next().value as string);
  recentSystems.set(value, read);
  return read;
}

/**
 * The last few instructions texts read, with their message: every call of a run sends the
 * same instructions, and read as the same object the call's request list starts as the list
 * of the call before did, which derive.ts hashes on from where that list ended.
 */
const recentSystems = new Map<string, readonly Message[]>();
const RECENT_SYSTEMS = 16;
const RECENT_SYSTEM_CHARS = 64 * 1024;

function systemOf(value: AttributeValue | undefined): Message[] {
  const v = jsonAttr(value);
  if (v === undefined) return [];
  // A raw instructions string that happens to parse as a JSON scalar ("42", "true") is still
  // the text the model was given; a single part object is a one-part list.
  const parts: Part[] = Array.isArray(v)
    ? v.map(canonicalPart).filter((p): p is Part => p !== undefined)
    : asObject(v)
      ? [canonicalPart(v)].filter((p): p is Part => p !== undefined)
      : typeof value === 'string'
        ? [{ type: 'text', text: value }]
        : [];
  if (!parts.length) return [];
  return [makeMessage({ role: 'system', content: parts })];
}
