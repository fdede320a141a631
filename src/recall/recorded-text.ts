/**
 * @module recall/recorded-text
 * What recall searches in a step, its recorded text: its prompts and answers, its
 * tool calls' arguments and results, and its names (the step name and the tool name). Not
 * tool schemas or configuration (`params`), not the model, not ids, roles or finish reasons:
 * those would make every run match "assistant" or "stop".
 *
 * A message list (llm and agent steps) contributes each message's content (without the
 * `type` of a content part, which is structure) and each tool call's name and arguments; any
 * other value (a tool's arguments and result, an agent's input) contributes every string and
 * number in it. Object keys are structure, not text, and are left out. A payload reference
 * that could not be resolved contributes nothing.
 */
import { type JsonValue, storedJson } from '../json/json-value.js';
import { isPayloadRef, type PayloadStore } from '../payloads/payload-store.js';
import { createPayloadResolver } from '../payloads/resolve-payloads.js';
import { indexWords, MAX_STEP_WORDS } from './tokenize.js';
import { inInt8Order } from './word-hash.js';

export interface RecordedStep {
  name: string;
  tool: string | null;
  request: JsonValue | null;
  response: JsonValue | null;
}

/** The step's searchable strings, in order; each is tokenized on its own. */
export function recordedTexts(step: RecordedStep): string[] {
  const out: string[] = [step.name];
  if (step.tool !== null && step.tool !== step.name) out.push(step.tool);
  collect(step.request, out);
  collect(step.response, out);
  return out;
}

/**
 * The step with its offloaded values read back in full, as recall searches them; one resolver
 * per step, so only that step's payloads are held at once. A payload that cannot be read stays
 * a reference (no text).
 */
export async function withFullText(
  step: RecordedStep,
  payloads: PayloadStore,
  signal?: AbortSignal,
): Promise<RecordedStep> {
  const resolver = createPayloadResolver(payloads, { maxBytes: Number.MAX_SAFE_INTEGER, signal });
  return { ...step, request: await resolver.resolve(step.request), response: await resolver.resolve(step.response) };
}

/**
 * A message of the message store, from its canonical JSON, with its offloaded values read back
 * in full (withFullText).
 */
export async function messageWithFullText(
  body: string,
  payloads: PayloadStore,
  signal?: AbortSignal,
): Promise<JsonValue | null> {
  const resolver = createPayloadResolver(payloads, { maxBytes: Number.MAX_SAFE_INTEGER, signal });
  return resolver.resolve(storedJson(body));
}

/** All of a step's words (its own and its messages'), as recall matches them. */
export function searchWords(step: RecordedStep): Int32Array {
  return indexWords(recordedTexts(step));
}

/**
 * The words recall stores in a step's own row (tokenize.ts indexWords' hash lanes, in ascending
 * order of the stored bigint: word-hash.ts inInt8Order): its names, and its request and response
 * unless they are message lists in the message store (`inMessages`), whose words are the
 * messages' (messageWords).
 */
export function stepOwnWords(step: RecordedStep, inMessages: { request: boolean; response: boolean }): Int32Array {
  const out: string[] = [step.name];
  if (step.tool !== null && step.tool !== step.name) out.push(step.tool);
  if (!inMessages.request) collect(step.request, out);
  if (!inMessages.response) collect(step.response, out);
  return inInt8Order(indexWords(out));
}

/**
 * The words of one message of the message store, from its canonical JSON: what a list
 * holding it contributes for it (recordedTexts), in the order stepOwnWords stores them.
 */
export function messageWords(body: string): Int32Array {
  return inInt8Order(indexWords(messageTexts(JSON.parse(body) as JsonValue)));
}

/**
 * messageWords of a message read from the value itself rather than its stored JSON, which
 * holds the same strings and finite numbers (canonical JSON has no other): undefined when it
 * has as many distinct words as a message keeps, where which ones are kept follows the order
 * of its keys, which its stored JSON sorts.
 */
export function messageValueWords(message: JsonValue): Int32Array | undefined {
  const words = indexWords(messageTexts(message));
  return words.length >> 1 < MAX_STEP_WORDS ? inInt8Order(words) : undefined;
}

/** The searchable strings of one message of the message store (recordedTexts of a list holding it). */
export function messageTexts(message: JsonValue | null): string[] {
  const out: string[] = [];
  if (message !== null && isMessage(message)) collectMessage(message, out);
  else values(message ?? undefined, out);
  return out;
}

function collect(value: JsonValue | null, out: string[]): void {
  if (Array.isArray(value) && value.some(isMessage)) {
    for (const item of value) {
      if (isMessage(item)) collectMessage(item, out);
      else values(item, out);
    }
    return;
  }
  values(value, out);
}

function isMessage(v: JsonValue): v is { [key: string]: JsonValue } {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && typeof v.role === 'string';
}

function collectMessage(m: { [key: string]: JsonValue }, out: string[]): void {
  if (Array.isArray(m.content)) {
    // Content parts ({"type": "text", "text": ...}): the part's type is structure.
    for (const part of m.content) {
      if (part !== null && typeof part === 'object' && !Array.isArray(part) && typeof part.type === 'string') {
        for (const key of Object.keys(part)) if (key !== 'type') values(part[key], out);
      } else values(part, out);
    }
  } else if (m.content !== undefined) values(m.content, out);
  if (!Array.isArray(m.tool_calls)) return;
  for (const call of m.tool_calls) {
    if (call === null || typeof call !== 'object' || Array.isArray(call)) continue;
    if (typeof call.name === 'string') out.push(call.name);
    if (call.arguments !== undefined) values(call.arguments, out);
  }
}

/** Every string and number inside value, depth first, without object keys. */
function values(value: JsonValue | undefined, out: string[]): void {
  if (value === null || value === undefined || typeof value === 'boolean') return;
  if (typeof value === 'string') {
    out.push(value);
    return;
  }
  if (typeof value === 'number') {
    out.push(String(value));
    return;
  }
  if (Array.isArray(value)) {
    for (const v of value) values(v, out);
    return;
  }
  if (isPayloadRef(value)) return;
  for (const key of Object.keys(value)) values(value[key], out);
}
