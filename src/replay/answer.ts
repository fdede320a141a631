/**
 * @module replay/answer
 * A model step's recorded answer, read once at creation into what both wires render: text,
 * tool calls in order, finish reason (OpenAI chat vocabulary), and the response id, model and
 * created time when the recording carried a provider body.
 *
 * Decoded by where it was recorded: a message list is read as messages (several assistant
 * messages become one answer: their text concatenated, their tool calls in order); a provider
 * response body (OpenAI `choices`, Anthropic `type: "message"`) as that body; text, and JSON
 * that is neither, as answer text, served as written.
 */
import type { JsonValue } from '../json/json-value.js';
import { providerToolCall } from '../normalize/provider-messages.js';
import { isMessageLike, isObject } from './canonical-messages.js';
import { storedReferenceOf } from '../payloads/stored-reference.js';
import { type PayloadReader, textOfPayload } from './payload-refs.js';
import { usableName } from './request-shapes.js';

export interface AnswerToolCall {
  id: string | null;
  name: string;
  /** undefined: none recorded (rendered as {}) */
  arguments: JsonValue | undefined;
}

export interface Answer {
  text: string | null;
  toolCalls: AnswerToolCall[];
  /** stop | tool_calls | length | content_filter, or null when not recorded */
  finishReason: string | null;
  responseId: string | null;
  model: string | null;
  /** Unix seconds from a recorded provider body */
  created: number | null;
}

const finishVocab: Record<string, string> = {
  stop: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_calls: 'tool_calls',
  tool_call: 'tool_calls',
  tool_use: 'tool_calls',
  length: 'length',
  max_tokens: 'length',
  content_filter: 'content_filter',
  refusal: 'content_filter',
  function_call: 'tool_calls',
};

export function finishReasonOf(v: unknown): string | null {
  if (typeof v !== 'string' || v === '') return null;
  return finishVocab[v] ?? v;
}

type Obj = { [key: string]: unknown };

/**
 * Block types that mark a content array as parts to render from. Narrower than the
 * normalizer's parts test on purpose: an answer whose content is JSON read from text (a list of
 * objects of any other `type`) is served back as that JSON, not dropped as unknown parts.
 */
const partTypes = new Set([
  'text',
  'input_text',
  'output_text',
  'image',
  'image_url',
  'input_audio',
  'file',
  'document',
  'tool_use',
  'tool_result',
  'tool_call',
  'tool_call_response',
  'thinking',
  'redacted_thinking',
  'reasoning',
  'refusal',
]);

function isPartList(v: unknown): v is Obj[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((p) => isObject(p) && typeof p.type === 'string' && partTypes.has(p.type))
  );
}

class AnswerBuilder {
  private texts: string[] = [];
  readonly answer: Answer = {
    text: null,
    toolCalls: [],
    finishReason: null,
    responseId: null,
    model: null,
    created: null,
  };

  addText(t: string): void {
    if (t !== '') this.texts.push(t);
  }

  async addContent(content: unknown): Promise<void> {
    if (content === undefined || content === null) return;
    if (typeof content === 'string') return this.addText(content);
    if (isPartList(content)) {
      for (const part of content) await this.addPart(part);
      return;
    }
    this.addText(JSON.stringify(content)); // content read as JSON from text: written back compactly
  }

  async addPart(part: Obj): Promise<void> {
    const type = part.type;
    if (type === 'text' || type === 'output_text') {
      await this.addContent(typeof part.text === 'string' ? part.text : part.content);
    } else if (type === 'tool_use' || type === 'tool_call') {
      await this.addToolCall(part);
    }
  }

  /** A tool call as the normalizer reads one (OpenAI {function}, Anthropic tool_use, GenAI tool_call, canonical). */
  async addToolCall(raw: Obj): Promise<void> {
    const call = providerToolCall(raw);
    if (call === undefined) return; // no name: nothing a wire can render as a call
    this.answer.toolCalls.push({ id: call.id ?? null, name: call.name, arguments: call.arguments });
  }

  finish(reason: unknown): void {
    const f = finishReasonOf(reason);
    if (f !== null) this.answer.finishReason = f;
  }

  async addMessage(m: Obj): Promise<void> {
    if (Array.isArray(m.parts)) {
      for (const p of m.parts) if (isObject(p)) await this.addPart(p);
    } else {
      await this.addContent(m.content);
    }
    if (Array.isArray(m.tool_calls)) for (const c of m.tool_calls) if (isObject(c)) await this.addToolCall(c);
    this.finish(m.finish_reason);
  }

  done(): Answer {
    this.answer.text = this.texts.length > 0 ? this.texts.join('') : null;
    return this.answer;
  }
}

/** The answer a model step recorded; null when none was recorded. Throws UnreadableValue. */
export async function readAnswer(response: JsonValue | null, reader: PayloadReader): Promise<Answer | null> {
  if (response === null) return null;
  const b = new AnswerBuilder();
  const at = storedReferenceOf(response);
  let value: unknown = at !== null && at.head !== null ? await reader.resolveStored(response) : response;
  if (at !== null && at.head === null) {
    const text = await reader.text(at.ref);
    const parsed = tryParse(text);
    if (Array.isArray(parsed) || (isObject(parsed) && (isProviderBody(parsed) || isMessageLike(parsed))))
      value = parsed;
    else {
      b.addText(textOfPayload(text)); // answer text, served as written
      return b.done();
    }
  }
  if (typeof value === 'string') {
    b.addText(value);
    return b.done();
  }
  if (isObject(value)) {
    if (isProviderBody(value)) await readProviderBody(value, b);
    else if (isMessageLike(value)) await b.addMessage(value);
    else b.addText(JSON.stringify(value));
    return b.done();
  }
  if (!Array.isArray(value) || value.length === 0) return null;
  const messages: Obj[] = [];
  for (const item of value) for (const m of Array.isArray(item) ? item : [item]) if (isObject(m)) messages.push(m);
  const assistant = messages.filter((m) => m.role === undefined || m.role === 'assistant');
  for (const m of assistant.length > 0 ? assistant : messages) await b.addMessage(m);
  return b.done();
}

function tryParse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isProviderBody(v: Obj): boolean {
  return Array.isArray(v.choices) || (v.type === 'message' && Array.isArray(v.content));
}

async function readProviderBody(body: Obj, b: AnswerBuilder): Promise<void> {
  b.answer.responseId = usableName(body.id);
  b.answer.model = usableName(body.model);
  if (typeof body.created === 'number' && Number.isFinite(body.created)) b.answer.created = Math.floor(body.created);
  if (Array.isArray(body.choices)) {
    const choice = body.choices.find(isObject);
    if (!choice) return;
    if (isObject(choice.message)) await b.addMessage(choice.message);
    b.finish(choice.finish_reason);
    return;
  }
  for (const part of body.content as unknown[]) if (isObject(part)) await b.addPart(part);
  b.finish(body.stop_reason);
}
