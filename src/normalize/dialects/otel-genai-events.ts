/**
 * @module normalize/dialects/otel-genai-events
 * Message content that OTel GenAI instrumentations send beside the span instead of on it:
 * - v1.28–1.36 per-message events gen_ai.{system,user,assistant,tool}.message and gen_ai.choice,
 *   as LOG RECORDS correlated by trace and span id (@opentelemetry/instrumentation-openai
 *   0.21: name in attribute `event.name`, OpenAI-shaped kvlist body, no role) or as span events;
 * - ≤ v1.27 span events gen_ai.content.prompt / gen_ai.content.completion (JSON attributes);
 * - v1.37+ gen_ai.client.inference.operation.details log records, whose attributes carry
 *   gen_ai.input.messages / gen_ai.output.messages / gen_ai.system_instructions;
 * - the same per-message events packed into one span attribute `events` (pydantic-ai
 *   instrumentation version 1, event_mode "attributes": a JSON list of event bodies, each merged
 *   with its attributes, event.name among them);
 * - Strands Agents' span events: the per-message events with each message's content as JSON
 *   text of Bedrock Converse blocks, a gen_ai.choice whose `message` is those blocks (a model
 *   call) or the answer's text (an agent), and on execute_tool spans a gen_ai.tool.message
 *   holding the tool's input and a gen_ai.choice holding its result (readToolEvents).
 * The whole history is re-emitted on every call, so one span's records are its full request.
 */
import type { AttributeValue, Attributes, LogRecord, SpanRecord } from '../../spans/span-record.js';
import type { Message } from '../step.js';
import type { JsonValue } from '../../json/json-value.js';
import { asObject, jsonAttr, str, toJson } from '../attrs.js';
import {
  converseBlocksOfText,
  converseValue,
  fromProviderMessage,
  fromProviderMessages,
  isConverseContent,
} from '../provider-messages.js';
import { VERTEX_AI_SYSTEM, withVertexAiCallIds } from '../vertexai-call-ids.js';

const MESSAGE_ROLES: Record<string, string> = {
  'gen_ai.system.message': 'system',
  'gen_ai.user.message': 'user',
  'gen_ai.assistant.message': 'assistant',
  'gen_ai.tool.message': 'tool',
  // Semantic Kernel (Python) text completions: the prompt
  'gen_ai.prompt': 'user',
};
const CHOICE = 'gen_ai.choice';
const DETAILS = 'gen_ai.client.inference.operation.details';

export interface EventContent {
  /** request messages from per-message events; undefined when there were none */
  request?: Message[];
  /** answer messages from gen_ai.choice events; undefined when there were none */
  response?: Message[];
  /** merged attributes of gen_ai.client.inference.operation.details records */
  details?: Attributes;
}

/** A log record's event name: the LogRecord field, else the older `event.name` attribute. */
export function logEventName(log: LogRecord): string | null {
  return log.eventName || str(log.attributes['event.name']);
}

/** The logs that belong to this span (callers may pass a whole batch). */
export function logsOfSpan(span: SpanRecord, logs: readonly LogRecord[]): LogRecord[] {
  return logs.filter((l) => l.spanId === span.spanId && (l.traceId === null || l.traceId === span.traceId));
}

export function isGenAiEventName(name: string | null): boolean {
  return (
    name !== null &&
    (name in MESSAGE_ROLES ||
      name === CHOICE ||
      name === DETAILS ||
      name === 'gen_ai.content.prompt' ||
      name === 'gen_ai.content.completion')
  );
}

/** Body fields that are objects or lists; span-event attributes can only hold them as JSON text. */
const STRUCTURED_FIELDS = ['message', 'tool_calls'];

/**
 * Span events carry their body as attributes; some SDKs JSON-encode it in one attribute.
 * Attribute values cannot be maps in most SDKs, so a choice's `message` or an assistant
 * message's `tool_calls` arrive as JSON strings there: read them back as the structures the
 * log-record body would have held. A `content` that is the JSON of Converse blocks (Strands
 * Agents) is read as those blocks; any other content stays as recorded.
 */
function spanEventBody(attrs: Attributes): JsonValue | undefined {
  const packed = attrs['gen_ai.event.content'] ?? attrs['body'];
  if (packed !== undefined) return jsonAttr(packed);
  const rest: { [k: string]: JsonValue } = {};
  for (const k in attrs) {
    if (k === 'gen_ai.system' || k === 'event.name' || k === 'gen_ai.provider.name') continue;
    const v = STRUCTURED_FIELDS.includes(k) ? jsonAttr(attrs[k]) : toJson(attrs[k]);
    if (v !== undefined) rest[k] = k === 'content' ? converseBlocksOfText(v) : v;
  }
  return rest;
}

/**
 * ≤ v1.27 gen_ai.prompt / gen_ai.completion: "RECOMMENDED to format as JSON string matching
 * OpenAI messages format", so a list of messages usually, but one message object or the plain
 * text are allowed too (the text is then the one user prompt, or the one answer).
 */
function contentList(value: AttributeValue | undefined, role: 'user' | 'assistant'): JsonValue[] {
  const v = jsonAttr(value);
  if (Array.isArray(v)) return v;
  if (asObject(v)) return [v as JsonValue];
  if (typeof value === 'string' && value !== '') return [{ role, content: value }];
  return [];
}

interface RawEvent {
  name: string;
  body: JsonValue | undefined;
  attributes: Attributes;
}

/** Keys pydantic-ai merges into a packed event that are the event's attributes, not its body. */
const PACKED_ATTRIBUTES = new Set(['event.name', 'gen_ai.system', 'gen_ai.provider.name', 'gen_ai.message.index']);

/**
 * Events packed in the span attribute `events`. An entry without event.name (the LogRecord
 * field, which pydantic-ai does not merge in every version) is named by its shape: a choice
 * holds `message`, a message its role.
 */
function packedEvents(value: AttributeValue | undefined): RawEvent[] {
  const list = value === undefined ? undefined : jsonAttr(value);
  if (!Array.isArray(list)) return [];
  const out: RawEvent[] = [];
  for (const item of list) {
    const e = asObject(item);
    if (!e) continue;
    const role = typeof e.role === 'string' ? e.role : undefined;
    const name =
      typeof e['event.name'] === 'string'
        ? e['event.name']
        : e.message !== undefined && e.index !== undefined
          ? CHOICE
          : role !== undefined
            ? `gen_ai.${role}.message`
            : null;
    if (!isGenAiEventName(name)) continue;
    const body: { [k: string]: JsonValue } = {};
    for (const k in e) if (!PACKED_ATTRIBUTES.has(k)) body[k] = e[k];
    out.push({ name: name as string, body, attributes: {} });
  }
  return out;
}

function collect(span: SpanRecord, logs: readonly LogRecord[]): RawEvent[] {
  const out: RawEvent[] = packedEvents(span.attributes['events']);
  for (const e of span.events) {
    if (isGenAiEventName(e.name))
      out.push({ name: e.name, body: spanEventBody(e.attributes), attributes: e.attributes });
  }
  for (const l of logs) {
    const name = logEventName(l);
    if (isGenAiEventName(name))
      out.push({ name: name as string, body: jsonAttr(l.body as AttributeValue), attributes: l.attributes });
  }
  return out;
}

/**
 * A details record's message attributes. @opentelemetry/instrumentation-openai (Responses API)
 * leaves the attribute unset and puts the message list in the record's body for the request
 * record and for each streamed output item: a body list whose every message has a
 * finish_reason is the answer (OutputMessage requires one), any other list the request.
 */
function detailsAttributes(ev: RawEvent): Attributes {
  const attrs = ev.attributes;
  if (!Array.isArray(ev.body) || ev.body.length === 0) return attrs;
  if (attrs['gen_ai.input.messages'] !== undefined || attrs['gen_ai.output.messages'] !== undefined) return attrs;
  const isOutput = ev.body.every((m) => asObject(m)?.finish_reason !== undefined);
  return { ...attrs, [isOutput ? 'gen_ai.output.messages' : 'gen_ai.input.messages']: ev.body };
}

/** Output lists from several records → one assistant message with all their parts, in order. */
function joinOutputs(outputs: JsonValue[][]): JsonValue[] {
  const parts: JsonValue[] = [];
  let finish: JsonValue | undefined;
  for (const list of outputs) {
    for (const m of list) {
      const msg = asObject(m);
      if (!msg) continue;
      if (Array.isArray(msg.parts)) parts.push(...msg.parts);
      if (msg.finish_reason !== undefined) finish = msg.finish_reason;
    }
  }
  return [{ role: 'assistant', parts, ...(finish !== undefined ? { finish_reason: finish } : {}) }];
}

/**
 * A choice's `message`. Strands Agents sets it as a span event attribute of text: a model
 * call's content blocks as JSON, or an agent's answer as the model wrote it, which may itself
 * be JSON (a structured answer, a number): that text is the answer's content, not a message.
 */
function choiceMessage(ev: RawEvent): JsonValue | undefined {
  const message = asObject(ev.body)?.message;
  const text = ev.attributes['message'];
  if (typeof text !== 'string' || message === undefined || typeof message === 'string') return message;
  if (isConverseContent(message)) return message;
  const m = asObject(message);
  const messageShaped =
    m !== undefined &&
    (m.role !== undefined || m.content !== undefined || m.tool_calls !== undefined || m.parts !== undefined);
  return messageShaped ? message : text;
}

function textBody(name: string, text: string): { [k: string]: JsonValue } {
  return name === CHOICE ? { message: text } : { content: text };
}

/** Reads the span's correlated events; undefined when it has none. */
export function readEventContent(span: SpanRecord, logs: readonly LogRecord[]): EventContent | undefined {
  const events = collect(span, logs);
  if (events.length === 0) return undefined;
  const result: EventContent = {};
  const request: Message[] = [];
  const choices: { index: number; messages: Message[] }[] = [];
  const outputs: JsonValue[][] = [];
  for (const ev of events) {
    // A body that is the text alone (Semantic Kernel's text completions: the prompt as the
    // user message's whole content, the answer as the choice's message) is its content.
    const body = asObject(ev.body) ?? (typeof ev.body === 'string' && ev.body !== '' ? textBody(ev.name, ev.body) : {});
    const role = MESSAGE_ROLES[ev.name];
    if (role) {
      // The tool message's `id` is the tool_call_id it answers.
      // The body's role is set where it differs from the event's (the conventions): OpenLLMetry
      // sends a developer or function message as a user message event with that role. Only
      // there: contrib vertexai writes a system instruction's or a tool result's own role
      // ("user", "") into system and tool message bodies, where the event's name says it.
      const bodyRole = typeof body.role === 'string' && body.role !== '' ? body.role : undefined;
      const said = ev.name === 'gen_ai.user.message' && bodyRole ? bodyRole : role;
      const vertexTurn =
        role === 'assistant' &&
        (ev.attributes['gen_ai.system'] === VERTEX_AI_SYSTEM || span.attributes['gen_ai.system'] === VERTEX_AI_SYSTEM);
      request.push(
        ...fromProviderMessage({
          ...(vertexTurn ? withVertexAiCallIds(body) : body),
          role: said,
          ...(role === 'tool' && body.id !== undefined ? { tool_call_id: body.id } : {}),
        }),
      );
    } else if (ev.name === CHOICE) {
      // tool_calls sit inside `message` (events-deprecated.yaml); a body that carries the
      // message fields directly (no `message`) is read as that message.
      // Strands Agents writes the message's content alone: its blocks, or an agent's answer text.
      const { index: _i, finish_reason: _f, ...direct } = body;
      const content = choiceMessage(ev);
      let message = asObject(content) ?? (Array.isArray(content) || typeof content === 'string' ? { content } : direct);
      // Semantic Kernel (Python) text completions: the answer's TextContent, {text, ...}
      if (message.content === undefined && message.tool_calls === undefined && typeof message.text === 'string')
        message = { content: message.text };
      // OpenLLMetry's event mode puts the choice's tool_calls beside its message
      if (message.tool_calls === undefined && Array.isArray(body.tool_calls))
        message = { ...message, tool_calls: body.tool_calls };
      const index = typeof body.index === 'number' ? body.index : choices.length;
      choices.push({ index, messages: fromProviderMessage({ role: 'assistant', ...message }, body.finish_reason) });
    } else if (ev.name === 'gen_ai.content.prompt') {
      request.push(...fromProviderMessages(contentList(ev.attributes['gen_ai.prompt'], 'user')));
    } else if (ev.name === 'gen_ai.content.completion') {
      for (const m of contentList(ev.attributes['gen_ai.completion'], 'assistant')) {
        choices.push({ index: choices.length, messages: fromProviderMessage(m, asObject(m)?.finish_reason) });
      }
    } else if (ev.name === DETAILS) {
      const attrs = detailsAttributes(ev);
      const output = jsonAttr(attrs['gen_ai.output.messages']);
      if (Array.isArray(output)) outputs.push(output);
      result.details = { ...(result.details ?? {}), ...attrs };
    }
  }
  // A streamed call sends one details record per finished output item: together they are
  // the one answer a non-streamed call records in a single record.
  if (outputs.length > 1 && result.details) result.details['gen_ai.output.messages'] = joinOutputs(outputs);
  if (request.length) result.request = request;
  if (choices.length) result.response = choices.sort((a, b) => a.index - b.index).flatMap((c) => c.messages);
  return result;
}

/**
 * A tool execution's input and result recorded as events instead of gen_ai.tool.call.*
 * (Strands Agents: gen_ai.tool.message's `content` is the input as JSON, gen_ai.choice's
 * `message` the result's content blocks). Undefined where no event holds them.
 */
export function readToolEvents(span: SpanRecord, logs: readonly LogRecord[]): { args?: unknown; result?: unknown } {
  const out: { args?: unknown; result?: unknown } = {};
  for (const ev of collect(span, logs)) {
    const body = asObject(ev.body);
    if (!body) continue;
    if (ev.name === 'gen_ai.tool.message' && out.args === undefined) out.args = converseValue(body.content);
    else if (ev.name === CHOICE && out.result === undefined) out.result = converseValue(body.message ?? body.content);
  }
  return out;
}
