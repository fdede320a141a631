/**
 * @module runs/messages
 * Reading canonical message lists (docs/architecture.md "Messages") back off a tape's steps.
 * Pure. A list is usable only when it is a real list of messages: a step whose content was
 * not recorded (null) or is still an unresolved payload reference has none.
 */
import type { Message, Step } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { storedReferenceOf } from '../payloads/stored-reference.js';

const ROLES = new Set(['system', 'user', 'assistant', 'tool']);

function isMessage(v: unknown): v is Message {
  return (
    v !== null && typeof v === 'object' && !Array.isArray(v) && ROLES.has((v as { role?: unknown }).role as string)
  );
}

/** The value as a message list, or null when it is not one (not recorded, or a payload reference). */
export function messagesOf(value: JsonValue | null | undefined): Message[] | null {
  if (!Array.isArray(value) || !value.every(isMessage)) return null;
  return value as unknown as Message[];
}

/** True when the value still holds the payload reference tapedeck wrote (not inlined). */
export function holdsPayloadRef(value: JsonValue | null | undefined): boolean {
  return storedReferenceOf(value) !== null;
}

/** A message's content as text: strings as they are, JSON values as compact JSON. */
export function contentText(content: JsonValue | undefined): string | null {
  if (content === undefined || content === null) return null;
  return typeof content === 'string' ? content : JSON.stringify(content);
}

/**
 * The text of an answer: the content of its assistant messages, joined. null when the answer
 * asks for tool calls (it is not a final answer) or says nothing.
 */
export function answerText(answer: readonly Message[]): string | null {
  const assistant = answer.filter((m) => m.role === 'assistant');
  if (assistant.length === 0 || assistant.some((m) => m.tool_calls?.length)) return null;
  const parts = assistant.map((m) => contentText(m.content)).filter((t): t is string => t !== null);
  return parts.length ? parts.join('') : null;
}

export function llmSteps(steps: readonly Step[]): Step[] {
  return steps.filter((s) => s.kind === 'llm');
}

/** Deep equality of two JSON values (key order ignored). */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => sameJson(v, bb[i]));
  }
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  return (
    ka.length === kb.length &&
    ka.every((k) => sameJson((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}
