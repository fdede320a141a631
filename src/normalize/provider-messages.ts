/**
 * @module normalize/provider-messages
 * Messages in a provider's own shape → canonical messages. One reader covers the shapes that
 * reach us: OpenAI chat messages (string or parts content, tool_calls, tool_call_id, legacy
 * function_call), Anthropic messages (content blocks with tool_use / tool_result, a separate
 * `system` parameter), the Vercel AI SDK's prompt messages (tool-call / tool-result parts),
 * the OTel v1.28–1.36 event bodies, which are OpenAI-shaped, AWS Bedrock Converse messages
 * (untyped content blocks {text} / {image} / {toolUse} / {toolResult} / {reasoningContent},
 * also as JSON text: Strands Agents' span events), and Google Gemini contents ({role, parts:
 * [{text} / {function_call} / {function_response} / {inline_data} / {file_data}]}, snake or
 * camel case: google-genai request bodies, Google ADK's gcp.vertex.agent.llm_request).
 * It is used for OpenInference's input.value / output.value bodies, Traceloop's legacy indexed
 * keys, OTel event bodies and ADK's request and response attributes.
 */
import type { Message, ToolCall } from './step.js';
import type { JsonValue } from '../json/json-value.js';
import { asObject, readJsonShaped } from './attrs.js';
import { canonicalContent, canonicalPart, isPartsList, makeMessage, makeToolCall, type Part } from './messages.js';

type Obj = { [k: string]: JsonValue };

/** An OpenAI-shaped tool call ({id, function:{name, arguments}}) or a flat one ({id, name, arguments}). */
export function providerToolCall(raw: unknown): ToolCall | undefined {
  const tc = asObject(raw);
  if (!tc) return undefined;
  const fn = asObject(tc.function);
  if (fn) return makeToolCall(tc.id, fn.name, fn.arguments);
  return makeToolCall(tc.id ?? tc.toolCallId, tc.name ?? tc.toolName, tc.arguments ?? tc.input ?? tc.args);
}

/** The member that names a Bedrock Converse content block (a tagged union with no `type`). */
const CONVERSE_KEYS = [
  'text',
  'image',
  'document',
  'video',
  'toolUse',
  'toolResult',
  'reasoningContent',
  'json',
  'cachePoint',
  'guardContent',
];

function isConverseBlock(v: unknown): boolean {
  const o = asObject(v);
  // a Gemini part can look the same ({text}); its thought markers are Gemini's own
  return (
    o !== undefined &&
    o.type === undefined &&
    CONVERSE_KEYS.some((k) => k in o) &&
    !('thought' in o || 'thought_signature' in o || 'thoughtSignature' in o)
  );
}

/** A list of Bedrock Converse content blocks (openinference-instrumentation-bedrock bodies). */
export function isConverseContent(v: unknown): v is JsonValue[] {
  return Array.isArray(v) && v.length > 0 && v.every(isConverseBlock);
}

/** A Converse media source: base64 bytes as data, an S3 location as a URL. */
function converseMedia(type: string, m: Obj | undefined): Part {
  const src = asObject(m?.source);
  const part: Part = { type };
  if (typeof m?.format === 'string' && type !== 'document') part.mime_type = `${type}/${m.format}`;
  if (typeof src?.bytes === 'string') part.data = src.bytes;
  const uri = asObject(src?.s3Location)?.uri;
  if (typeof uri === 'string') part.url = uri;
  if (typeof m?.name === 'string') part.name = m.name;
  return part;
}

/**
 * One Converse block → the typed part the readers below know (`tool_use` / `tool_result` like
 * Anthropic's), or undefined for a cache point. A tool result's blocks fold like any content:
 * one {json} block is its value, text blocks their text.
 */
function fromConverseBlock(raw: JsonValue): Part | undefined {
  const b = raw as Obj;
  if (typeof b.text === 'string') return { type: 'text', text: b.text };
  const tu = asObject(b.toolUse);
  if (tu) return { type: 'tool_use', id: tu.toolUseId ?? null, name: tu.name ?? null, input: tu.input ?? null };
  const tr = asObject(b.toolResult);
  if (tr) {
    const blocks = Array.isArray(tr.content) ? tr.content : [];
    const content =
      blocks.length === 1 && asObject(blocks[0])?.json !== undefined
        ? (asObject(blocks[0])?.json as JsonValue)
        : (converseResultText(blocks) ?? converseParts(blocks));
    return { type: 'tool_result', tool_use_id: tr.toolUseId ?? null, content };
  }
  const rc = asObject(b.reasoningContent);
  if (rc) {
    const t = asObject(rc.reasoningText)?.text;
    return typeof t === 'string' ? { type: 'reasoning', text: t } : undefined;
  }
  if (b.json !== undefined) return { type: 'text', text: JSON.stringify(b.json) };
  for (const type of ['image', 'document', 'video'])
    if (asObject(b[type])) return converseMedia(type, asObject(b[type]));
  return undefined; // cachePoint, guardContent: hints, not content
}

/**
 * Tool-result blocks that are all text or JSON, as the flattened keys hold them: each block's
 * text (a {json} block as JSON text) joined with a blank line (openinference-instrumentation-
 * bedrock _converse_attributes.py get_message_objects), so body and flattened keys agree.
 * Undefined when a block is anything else (an image, a document).
 */
function converseResultText(blocks: JsonValue[]): string | undefined {
  if (blocks.length < 2) return undefined;
  const texts: string[] = [];
  for (const raw of blocks) {
    const b = asObject(raw);
    if (typeof b?.text === 'string') texts.push(b.text);
    else if (b?.json !== undefined) texts.push(JSON.stringify(b.json));
    else return undefined;
  }
  return texts.join('\n\n');
}

function converseParts(blocks: JsonValue[]): Part[] {
  return blocks.map(fromConverseBlock).filter((p): p is Part => p !== undefined);
}

/** Content in a shape the readers below know: Converse blocks become typed parts. */
function typedContent(content: unknown): unknown {
  return isConverseContent(content) ? converseParts(content) : content;
}

/**
 * JSON text holding Converse content blocks (Strands Agents serialises each message's blocks
 * into its span event) → the blocks; any other value is returned as it is, so text that only
 * looks like JSON stays text for the usual JSON-shaped reading.
 */
export function converseBlocksOfText(v: JsonValue): JsonValue {
  if (typeof v !== 'string') return v;
  const parsed = readJsonShaped(v);
  return isConverseContent(parsed) ? parsed : v;
}

/**
 * A tool's input or result as Converse blocks (Strands Agents' tool events) → the value:
 * text and JSON blocks joined as a tool result's are (one block: its text), other blocks as
 * parts. Anything else is returned as it is.
 */
export function converseValue(v: unknown): unknown {
  if (!isConverseContent(v)) return v;
  const b = asObject(v[0]);
  if (v.length === 1 && typeof b?.text === 'string') return b.text;
  return converseResultText(v) ?? converseParts(v);
}

/** A Gemini part ({text} / {function_call} / ...; no `type`), snake or camel case. */
function isGeminiPart(v: unknown): boolean {
  const p = asObject(v);
  return p !== undefined && p.type === undefined && GEMINI_KEYS.some((k) => k in p);
}
const GEMINI_KEYS = [
  'text',
  'function_call',
  'functionCall',
  'function_response',
  'functionResponse',
  'inline_data',
  'inlineData',
  'file_data',
  'fileData',
  'executable_code',
  'executableCode',
  'code_execution_result',
  'codeExecutionResult',
];

/** A Gemini Content ({role?, parts: [...]}) → canonical messages: text, calls and responses apart. */
function fromGeminiContent(m: Obj, finishReason?: unknown): Message[] {
  const role = m.role ?? 'user';
  const parts: Part[] = [];
  const calls: (ToolCall | undefined)[] = [];
  const results: Message[] = [];
  for (const raw of m.parts as JsonValue[]) {
    const p = asObject(raw);
    if (!p) continue;
    const call = asObject(p.function_call ?? p.functionCall);
    const answer = asObject(p.function_response ?? p.functionResponse);
    const data = asObject(p.inline_data ?? p.inlineData);
    const file = asObject(p.file_data ?? p.fileData);
    if (call) calls.push(makeToolCall(call.id, call.name, call.args ?? null));
    else if (answer)
      results.push(makeMessage({ role: 'tool', content: toolResultContent(answer.response), toolCallId: answer.id }));
    else if (data)
      parts.push(canonicalPart({ type: 'file', data: data.data, mime_type: data.mime_type ?? data.mimeType })!);
    else if (file)
      parts.push(
        canonicalPart({
          type: 'file',
          url: file.file_uri ?? file.fileUri,
          mime_type: file.mime_type ?? file.mimeType,
        })!,
      );
    else if (typeof p.text === 'string' && p.text !== '')
      parts.push(p.thought === true ? { type: 'reasoning', text: p.text } : { type: 'text', text: p.text });
  }
  // contrib vertexai's choice names the calls again in tool_calls, with the ids it made up
  const named = Array.isArray(m.tool_calls) ? m.tool_calls.map(providerToolCall) : [];
  const toolCalls = named.length > 0 ? named : calls;
  if (results.length > 0 && parts.length === 0 && toolCalls.length === 0) return results;
  return [...results, makeMessage({ role, content: parts, toolCalls, finishReason })];
}

/** A Gemini Content's parts, or the value itself (text, a list of parts). */
function geminiParts(v: JsonValue | undefined): JsonValue | undefined {
  const parts = asObject(v)?.parts;
  return Array.isArray(parts) ? parts : v;
}

/**
 * Gemini `contents` in every spelling the google-genai SDKs accept (ContentListUnion,
 * google-genai _transformers.py t_contents): a Content, a list of Content, text, a part, or
 * a list of texts and parts; or undefined when the value is none of them. As the SDK sends
 * them, texts and bare parts in a row are one user turn, and each Content is a turn of its own.
 */
function fromGeminiContents(contents: JsonValue): Message[] | undefined {
  const list = Array.isArray(contents) ? contents : [contents];
  if (!list.every((c) => typeof c === 'string' || asObject(c) !== undefined)) return undefined;
  const out: Message[] = [];
  let turn: JsonValue[] = [];
  const endTurn = () => {
    if (turn.length > 0) out.push(...fromGeminiContent({ role: 'user', parts: turn }));
    turn = [];
  };
  for (const c of list) {
    if (typeof c === 'string') turn.push({ text: c });
    else if (isGeminiPart(c)) turn.push(c);
    else {
      endTurn();
      out.push(...fromProviderMessage(c));
    }
  }
  endTurn();
  return out;
}

/** Whether a request body's `contents` is Gemini's: a list, text, a Content or a part. */
function isGeminiContents(v: JsonValue | undefined): v is JsonValue {
  if (Array.isArray(v) || (typeof v === 'string' && v !== '')) return true;
  const o = asObject(v);
  return o !== undefined && (Array.isArray(o.parts) || isGeminiPart(o));
}

/** AI SDK v5+ outputs that report a failed tool: {type: "error-text" | "error-json", value}. */
function isErrorOutput(output: unknown): boolean {
  const type = asObject(output)?.type;
  return type === 'error-text' || type === 'error-json';
}

/** The content of a tool result block: Anthropic allows a string or a list of blocks. */
function toolResultContent(value: unknown): JsonValue | undefined {
  const o = asObject(value);
  // AI SDK v5+ wraps outputs as {type: "text"|"json"|"error-text"|"error-json"|"content", value}
  if (o && typeof o.type === 'string' && 'value' in o && Object.keys(o).length <= 2) return canonicalContent(o.value);
  return canonicalContent(value);
}

/**
 * One provider message → one or more canonical messages. An Anthropic user turn holding
 * several tool_result blocks becomes one tool message per block (in block order), with any
 * text around them kept as user messages in place.
 */
export function fromProviderMessage(raw: unknown, finishReason?: unknown): Message[] {
  const m = asObject(raw);
  if (!m) return [];
  if (m.content === undefined && Array.isArray(m.parts) && m.parts.some(isGeminiPart))
    return fromGeminiContent(m, finishReason);
  // A Gemini Content as the message's content (OTel contrib google-genai's events, which send
  // every history entry as a user message event, {content: {parts, role}}: the Content's role
  // says whose turn it was), or its parts as the content (contrib vertexai's events)
  const gemini = asObject(m.content);
  if (gemini && Array.isArray(gemini.parts))
    return fromGeminiContent({ ...gemini, role: gemini.role ?? m.role }, finishReason);
  if (
    Array.isArray(m.content) &&
    m.content.length > 0 &&
    m.content.every(isGeminiPart) &&
    !isConverseContent(m.content)
  ) {
    const { content, ...rest } = m;
    return fromGeminiContent({ ...rest, parts: content }, finishReason);
  }
  const role = m.role;
  const calls: (ToolCall | undefined)[] = [];
  if (Array.isArray(m.tool_calls)) for (const tc of m.tool_calls) calls.push(providerToolCall(tc));
  const fc = asObject(m.function_call);
  if (fc) calls.push(makeToolCall(undefined, fc.name, fc.arguments));
  const toolCallId = m.tool_call_id ?? (role === 'tool' ? m.id : undefined);

  const content = typedContent(m.content);
  if (!isPartsList(content)) {
    const extra = typeof m.refusal === 'string' && m.refusal !== '' ? [{ type: 'refusal', text: m.refusal }] : [];
    const body =
      extra.length && typeof content === 'string' && content !== ''
        ? [{ type: 'text', text: content }, ...extra]
        : extra.length
          ? extra
          : content;
    return [makeMessage({ role, content: body, toolCalls: calls, toolCallId, finishReason })];
  }

  // A parts list: split out tool calls and tool results, keep the rest as content parts.
  const out: Message[] = [];
  let parts: Part[] = [];
  const flushUser = () => {
    if (parts.length) out.push(makeMessage({ role, content: parts }));
    parts = [];
  };
  let sawToolResult = false;
  for (const rawPart of content) {
    const p = rawPart as Obj;
    switch (p.type) {
      case 'tool_use':
      case 'tool-call':
      case 'server_tool_use': {
        // Traceloop's Anthropic and LangChain instrumentations copy tool_use blocks into
        // tool_calls and keep them in the content too: the same call once.
        // (OpenInference's Anthropic stream accumulator names them tool_name / tool_input)
        const call = makeToolCall(
          p.id ?? p.toolCallId,
          p.name ?? p.toolName ?? p.tool_name,
          p.input ?? p.args ?? p.tool_input,
        );
        if (call?.id === undefined || !calls.some((c) => c?.id === call.id)) calls.push(call);
        break;
      }
      case 'tool_result':
      case 'tool-result':
        flushUser();
        sawToolResult = true;
        out.push(
          makeMessage({
            role: 'tool',
            content: toolResultContent(p.content ?? p.output ?? p.result),
            toolCallId: p.tool_use_id ?? p.toolCallId,
            isError: p.is_error ?? p.isError ?? isErrorOutput(p.output),
          }),
        );
        break;
      default: {
        const part = canonicalPart(p);
        if (part) parts.push(part);
      }
    }
  }
  if (sawToolResult) {
    flushUser();
    return out;
  }
  return [makeMessage({ role, content: parts, toolCalls: calls, toolCallId, finishReason })];
}

export function fromProviderMessages(list: unknown): Message[] {
  if (!Array.isArray(list)) return [];
  const out: Message[] = [];
  for (const m of list) out.push(...fromProviderMessage(m));
  return out;
}

/** Anthropic's `system` parameter (a string or text blocks) as a leading system message. */
function systemMessages(system: unknown): Message[] {
  if (system === undefined || system === null || system === '') return [];
  const msg = makeMessage({ role: 'system', content: typedContent(system) });
  return msg.content === undefined ? [] : [msg];
}

const PYTHON_REPR = /^parts=\[/;

/** A bare list of messages: every item an object with a string role. */
function isMessageList(v: unknown): v is JsonValue[] {
  return Array.isArray(v) && v.length > 0 && v.every((m) => typeof asObject(m)?.role === 'string');
}

/**
 * A whole request body (OpenAI chat, Anthropic messages, Bedrock Converse) → canonical
 * messages, or undefined when the body is not a chat request (an embeddings or Responses API
 * call). A bare message list is the request's messages (openinference-instrumentation-bedrock
 * records only `messages` in input.value).
 */
export function messagesFromRequestBody(body: unknown): Message[] | undefined {
  if (isMessageList(body)) return fromProviderMessages(body);
  const b = asObject(body);
  if (b && isGeminiContents(b.contents)) {
    // google-genai objects that JSON could not encode arrive as their Python repr
    // ("parts=[Part(text='…')] role='user'", openinference-instrumentation-google-genai's
    // json.dumps(default=str)): unreadable, so the flattened messages are read instead.
    const contents = Array.isArray(b.contents) ? b.contents : [b.contents];
    if (contents.some((c) => typeof c === 'string' && PYTHON_REPR.test(c))) return undefined;
    const messages = fromGeminiContents(b.contents);
    if (messages === undefined) return undefined;
    const config = asObject(b.config);
    return [
      // text, a Content or a list of parts: the parts' {text} blocks read as Converse's do
      ...systemMessages(
        geminiParts(
          config?.system_instruction ?? config?.systemInstruction ?? b.system_instruction ?? b.systemInstruction,
        ),
      ),
      ...messages,
    ];
  }
  if (!b || !Array.isArray(b.messages)) return undefined;
  return [...systemMessages(b.system), ...fromProviderMessages(b.messages)];
}

/**
 * A whole response body → canonical answer messages: OpenAI chat (one per choice, with its
 * finish_reason) or Anthropic (one message, stop_reason mapped). Undefined when the body is
 * neither (e.g. a streamed call's plain text).
 */
export function messagesFromResponseBody(body: unknown): Message[] | undefined {
  const b = asObject(body);
  if (!b) return undefined;
  if (Array.isArray(b.choices)) {
    const out: Message[] = [];
    for (const c of b.choices) {
      const choice = asObject(c);
      if (!choice) continue;
      const msg = asObject(choice.message) ?? { role: 'assistant', content: choice.text ?? null };
      out.push(...fromProviderMessage({ role: 'assistant', ...msg }, choice.finish_reason));
    }
    return out;
  }
  if (Array.isArray(b.content) && (b.type === 'message' || b.role === 'assistant')) {
    return fromProviderMessage({ role: 'assistant', content: b.content }, b.stop_reason);
  }
  // Gemini: {candidates: [{content, finish_reason}]}; Google ADK's LlmResponse: {content, finish_reason}
  if (Array.isArray(b.candidates)) {
    return b.candidates.flatMap((c) => {
      const cand = asObject(c);
      const content = asObject(cand?.content);
      return content
        ? fromProviderMessage({ role: 'model', ...content }, cand?.finish_reason ?? cand?.finishReason)
        : [];
    });
  }
  const gemini = asObject(b.content);
  if (gemini && Array.isArray(gemini.parts))
    return fromProviderMessage({ role: 'model', ...gemini }, b.finish_reason ?? b.finishReason);
  // Bedrock Converse: {output: {message: {role, content: [blocks]}}, stopReason, usage}
  const converse = asObject(asObject(b.output)?.message);
  if (converse && Array.isArray(converse.content)) {
    return fromProviderMessage({ role: 'assistant', content: converse.content }, b.stopReason);
  }
  return undefined;
}
