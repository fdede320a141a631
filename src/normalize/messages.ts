/**
 * @module normalize/messages
 * The canonical message (docs/architecture.md "Messages") and the folding rules every layout
 * shares, so that two layouts that said the same thing produce the same bytes:
 * - keys that carry nothing are left out ("" content, [] tool calls, null ids); a tool call
 *   with no arguments has `{}`, whichever way the layout wrote that;
 * - text is kept as recorded, JSON-shaped text included (a structured answer, tool-call
 *   arguments): what is stored and served is the recorded text byte for byte, and comparisons
 *   read it as JSON (comparable.ts);
 * - content made only of text parts is their concatenation (what
 *   @opentelemetry/instrumentation-openai does before it logs a message), other parts stay a list;
 * - roles a layout names in a way we do not know are kept as recorded;
 * - finish reasons use OpenAI chat's vocabulary.
 */
import type { Message, ToolCall } from './step.js';
import type { JsonValue } from '../json/json-value.js';
import { asObject, readJsonShaped } from './attrs.js';

type Role = Message['role'];

const ROLE_ALIASES: Record<string, Role> = {
  system: 'system',
  developer: 'system', // OpenAI's newer name for the system role
  user: 'user',
  human: 'user',
  assistant: 'assistant',
  model: 'assistant', // Gemini
  ai: 'assistant',
  tool: 'tool',
  function: 'tool', // OpenAI legacy function results
  ipython: 'tool',
  // smolagents' message roles
  'tool-call': 'assistant',
  'tool-response': 'tool',
};

/**
 * Maps a layout's role name to a canonical role. A role we do not know (a framework's own,
 * "critic" or "observation") is kept as recorded rather than passed off as a user turn; a
 * message with no role is a user turn.
 */
export function canonicalRole(role: unknown): Role {
  if (typeof role !== 'string' || role === '') return 'user';
  return (Object.hasOwn(ROLE_ALIASES, role.toLowerCase()) && ROLE_ALIASES[role.toLowerCase()]) || role;
}

const FINISH_REASONS: Record<string, string> = {
  stop: 'stop',
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_calls: 'tool_calls',
  tool_call: 'tool_calls', // GenAI semconv, Traceloop
  'tool-calls': 'tool_calls', // Vercel AI SDK
  tool_use: 'tool_calls', // Anthropic
  function_call: 'tool_calls',
  function_calls: 'tool_calls', // AutoGen's CreateResult
  length: 'length',
  max_tokens: 'length',
  content_filter: 'content_filter',
  'content-filter': 'content_filter',
  toolcalls: 'tool_calls', // Semantic Kernel .NET (ChatFinishReason.ToolCalls)
  contentfilter: 'content_filter', // Semantic Kernel .NET
  content_filtered: 'content_filter', // Bedrock Converse stopReason
  guardrail_intervened: 'content_filter', // Bedrock Converse stopReason
  safety: 'content_filter', // Gemini SAFETY
};

/** OpenAI chat's vocabulary; unmapped values (error, pause_turn, refusal) pass through raw. */
export function canonicalFinishReason(reason: unknown): string | undefined {
  if (typeof reason !== 'string' || reason === '') return undefined;
  // Gemini writes its enum upper case (STOP, MAX_TOKENS, SAFETY); Semantic Kernel (Python) the
  // enum member's str(), FinishReason.TOOL_CALLS.
  const member = reason.startsWith('FinishReason.') ? reason.slice('FinishReason.'.length) : reason;
  for (const key of [member, member.toLowerCase()]) if (Object.hasOwn(FINISH_REASONS, key)) return FINISH_REASONS[key];
  return reason;
}

/**
 * Tool-call arguments as recorded: text stays the recorded text (compared as the JSON it
 * spells), a structured value stays that value. A call recorded with no arguments is `{}` in
 * every layout, whether the layout wrote an empty object, its text, or empty text (a stream
 * of a call with no input accumulates none); arguments not recorded at all (content capture
 * off) stay left out.
 */
export function canonicalArguments(args: unknown): JsonValue | undefined {
  if (args === undefined || args === null) return undefined;
  if (typeof args === 'string') {
    if (args.trim() === '') return {};
    return isEmptyObject(readJsonShaped(args)) ? {} : args;
  }
  return args as JsonValue;
}

function isEmptyObject(v: unknown): boolean {
  const o = asObject(v);
  return o !== undefined && Object.keys(o).length === 0;
}

export function makeToolCall(id: unknown, name: unknown, args: unknown): ToolCall | undefined {
  if (typeof name !== 'string' || name === '') return undefined;
  const call: ToolCall = { name };
  if (typeof id === 'string' && id !== '') call.id = id;
  const a = canonicalArguments(args);
  if (a !== undefined) call.arguments = a;
  return call;
}

/** A content part in canonical form, or undefined when it carries nothing. */
export type Part = { [k: string]: JsonValue };

/** A list whose every element is an object with a string `type`: a parts list, not data. */
export function isPartsList(v: unknown): v is Part[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every((p) => asObject(p) !== undefined && typeof (p as Part).type === 'string')
  );
}

/**
 * Folds canonical parts into message content: nothing → undefined, text only → the joined
 * text, anything else → the list of parts.
 */
export function contentFromParts(parts: Part[]): JsonValue | undefined {
  if (parts.length === 0) return undefined;
  if (parts.every((p) => p.type === 'text')) return canonicalContent(parts.map((p) => p.text as string).join(''));
  return parts;
}

/**
 * Message content from a string, a parts list, or a structured value. Strings are kept as
 * recorded, JSON-shaped or not; structured values (an object a layout stored as JSON) stay
 * as they are.
 */
export function canonicalContent(value: unknown): JsonValue | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (isPartsList(value)) return contentFromParts(value.map(canonicalPart).filter((p): p is Part => p !== undefined));
  if (Array.isArray(value) && value.length === 0) return undefined;
  return value as JsonValue;
}

/**
 * One content part from any provider or layout: OpenAI (text, image_url, input_audio,
 * refusal), Anthropic (text, image, thinking, document), GenAI (text, reasoning, blob, uri,
 * file, refusal), OpenInference message_content. Tool calls and tool results are not parts;
 * callers split them out first.
 */
export function canonicalPart(raw: unknown): Part | undefined {
  const p = asObject(raw);
  if (!p) return undefined;
  const type = typeof p.type === 'string' ? p.type : 'text';
  const text = typeof p.text === 'string' ? p.text : typeof p.content === 'string' ? p.content : undefined;
  switch (type) {
    case 'text':
    case 'input_text':
    case 'output_text':
      return text === undefined || text === '' ? undefined : { type: 'text', text };
    case 'reasoning':
    case 'thinking': {
      const t = typeof p.thinking === 'string' ? p.thinking : text;
      return t === undefined || t === '' ? undefined : { type: 'reasoning', text: t };
    }
    case 'refusal': {
      const t = typeof p.refusal === 'string' ? p.refusal : text;
      return t === undefined || t === '' ? undefined : { type: 'refusal', text: t };
    }
    case 'image_url':
    case 'input_image': {
      // chat completions: {image_url: {url, detail}}; Responses: {image_url: "<url>", detail}
      const url = asObject(p.image_url)?.url ?? p.image_url;
      const detail = asObject(p.image_url)?.detail ?? p.detail;
      return typeof url === 'string' ? dropEmpty({ type: 'image', ...dataOrUrl(url), detail }) : undefined;
    }
    case 'image':
    case 'document': {
      // Already canonical ({type, url|data, mime_type, detail}): canonicalPart must be idempotent.
      if (typeof p.url === 'string' || typeof p.data === 'string')
        return dropEmpty({
          type,
          ...(typeof p.url === 'string' ? dataOrUrl(p.url) : {}),
          data: p.data,
          mime_type: p.mime_type,
          detail: p.detail,
        });
      const src = asObject(p.source);
      if (src?.type === 'url' && typeof src.url === 'string') return dropEmpty({ type, ...dataOrUrl(src.url) });
      if (src && typeof src.data === 'string') return dropEmpty({ type, mime_type: src.media_type, data: src.data });
      const url = asObject(asObject(p.image)?.image)?.url;
      if (typeof url === 'string') return dropEmpty({ type, ...dataOrUrl(url) });
      // Vercel AI SDK v4 image part: {image: <base64 | URL>, mimeType}
      if (typeof p.image === 'string') return dropEmpty({ type, mime_type: mediaTypeOf(p), ...dataOrUrl(p.image) });
      return dropEmpty({ ...p, type });
    }
    case 'uri':
      return dropEmpty({ type: String(p.modality ?? 'uri'), ...dataOrUrl(p.uri), mime_type: p.mime_type });
    case 'blob':
      return dropEmpty({ type: String(p.modality ?? 'blob'), data: p.content, mime_type: p.mime_type });
    case 'file':
      return filePart(p);
    default: {
      const { cache_control: _hint, ...rest } = p; // a provider caching hint, not content
      return dropEmpty(rest);
    }
  }
}

/** A part's media type, whichever spelling the layout uses (GenAI, AI SDK v4, AI SDK v5+). */
function mediaTypeOf(p: Part): JsonValue | undefined {
  return p.mime_type ?? p.mimeType ?? p.mediaType;
}

/**
 * Inline data is base64 text; a URL (http(s), or a provider's file URL) is a reference. A
 * base64 data URI is inline data, so an image sent as OpenAI's data URI and one recorded as a
 * GenAI blob are one part: {type, data, mime_type}.
 */
function dataOrUrl(v: unknown): { data?: string; url?: string; mime_type?: string } {
  if (typeof v !== 'string') return {};
  const inline = /^data:([^;,]*)((?:;[^;,]*)*);base64,/i.exec(v);
  if (inline)
    return inline[1] ? { data: v.slice(inline[0].length), mime_type: inline[1] } : { data: v.slice(inline[0].length) };
  return /^(https?|data|gs|s3):/i.test(v) ? { url: v } : { data: v };
}

/**
 * A file part: GenAI {modality, file_id, mime_type}; Vercel AI SDK {data, mediaType | mimeType,
 * filename} (v5+ sends images this way, so an image media type makes it an image part);
 * OpenAI chat {file: {file_id | file_data, filename}}. The bytes or reference are kept.
 */
function filePart(p: Part): Part {
  const f = asObject(p.file) ?? p;
  const data = typeof p.data === 'string' ? p.data : f.file_data;
  const inline = dataOrUrl(data);
  const mime = mediaTypeOf(p) ?? inline.mime_type;
  const family = typeof mime === 'string' ? /^(image|audio|video)\//.exec(mime)?.[1] : undefined;
  return dropEmpty({
    type: String(p.modality ?? family ?? 'file'),
    file_id: f.file_id,
    url: p.url, // already canonical: canonicalPart must be idempotent
    ...inline,
    mime_type: mime,
    filename: f.filename,
  });
}

function dropEmpty(o: { [k: string]: JsonValue | undefined }): Part {
  const out: Part = {};
  for (const [k, v] of Object.entries(o)) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}

export interface MessageFields {
  role: unknown;
  content?: unknown;
  toolCalls?: (ToolCall | undefined)[];
  toolCallId?: unknown;
  finishReason?: unknown;
  /** a tool result the tool reported as an error (Anthropic's is_error, the AI SDK's error outputs) */
  isError?: unknown;
}

/**
 * Builds a canonical message, leaving out every key that carries nothing. A message with a
 * tool-call id is a tool result whatever role the layout gave it (OpenInference writes
 * Anthropic tool results as user messages with a tool_call_id).
 */
export function makeMessage(f: MessageFields): Message {
  const toolCallId = typeof f.toolCallId === 'string' && f.toolCallId !== '' ? f.toolCallId : undefined;
  const msg: Message = { role: toolCallId ? 'tool' : canonicalRole(f.role) };
  const content = canonicalContent(f.content);
  if (content !== undefined) msg.content = content;
  if (toolCallId) msg.tool_call_id = toolCallId;
  if (f.isError === true && msg.role === 'tool') msg.is_error = true;
  const calls = f.toolCalls?.filter((c): c is ToolCall => c !== undefined);
  if (calls && calls.length > 0) msg.tool_calls = calls;
  const finish = canonicalFinishReason(f.finishReason);
  if (finish !== undefined) msg.finish_reason = finish;
  return msg;
}

/**
 * A completions API call's prompts as recorded (`llm.prompts`: a list of prompt texts, or
 * one): one user message each; undefined when none was recorded.
 */
export function promptMessages(value: unknown): Message[] | undefined {
  const prompts = (Array.isArray(value) ? value : [value]).filter(
    (p): p is string => typeof p === 'string' && p !== '',
  );
  return prompts.length > 0 ? prompts.map((content) => makeMessage({ role: 'user', content })) : undefined;
}

/** True when a message list recorded anything beyond roles and ids (content capture on). */
export function carriesContent(messages: Message[]): boolean {
  return messages.some(
    (m) => m.content !== undefined || (m.tool_calls?.some((c) => c.arguments !== undefined) ?? false),
  );
}

/**
 * A tool's arguments or result, or an agent's input or output, as a layout stored it: a
 * string is kept as recorded, unless it is the JSON of content parts (a list of text blocks,
 * the Anthropic SDK's tool_result content, folds to its text); structured values fold the
 * same way or stay as they are.
 */
export function canonicalValue(v: unknown): JsonValue | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') {
    if (v === '') return undefined;
    const j = readJsonShaped(v);
    return isPartsList(j) ? canonicalContent(j) : v;
  }
  return canonicalContent(v);
}
