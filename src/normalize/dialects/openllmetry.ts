/**
 * @module normalize/dialects/openllmetry
 * OpenLLMetry / Traceloop. Three shapes:
 * - instrumentation spans since 2026-03 (JS 0.27: `chat {model}` CLIENT): the OTel GenAI
 *   message attributes, read with the same code as the otel-genai dialect;
 * - the legacy indexed layout gen_ai.prompt.{i}.* / gen_ai.completion.{i}.* (incl. tool_calls
 *   and function_call), still emitted by older installs;
 * - the SDK's decorator spans, classified by traceloop.span.kind (workflow / task / agent /
 *   tool), with traceloop.entity.input / output holding JSON.
 * The SDK stamps traceloop.workflow.name, gen_ai.agent.name and gen_ai.conversation.id on
 * every span in its context (other libraries' too), so matching tests traceloop.span.kind,
 * the Traceloop scope and the indexed keys, never the `traceloop.` prefix.
 */
import type { AttributeValue, Attributes, LogRecord, SpanRecord } from '../../spans/span-record.js';
import type { Message, StepDraft } from '../step.js';
import type { JsonValue } from '../../json/json-value.js';
import { asObject, firstStr, hasIndexedKey, indexedGroups, parseJson, str, toJson } from '../attrs.js';
import { canonicalValue, isPartsList, promptMessages } from '../messages.js';
import { genAiInput, genAiOutput } from '../genai-parts.js';
import { fromProviderMessage, isConverseContent } from '../provider-messages.js';
import { genAiParams, genAiTokens, reportedCost } from '../usage.js';
import {
  genAiKind,
  genAiMessages,
  hasToolCallKeys,
  isLlmOperation,
  llmModel,
  llmRequestModel,
  otelGenAi,
  recorded,
} from './otel-genai.js';
import { emptyDraft, orNull, type Dialect } from './types.js';
import { logsOfSpan, readEventContent } from './otel-genai-events.js';
import { aiSdkOperation, isAiSdkModelCall } from './vercel-ai.js';

function isTraceloopScope(span: SpanRecord): boolean {
  return span.scope.name.startsWith('@traceloop/') || span.scope.name.includes('traceloop');
}

/**
 * A Traceloop input {"args": [...], "kwargs": {...}} is the arguments the tool
 * received: the kwargs when there are no positional args, the single positional arg when
 * there are no kwargs, otherwise left as it is.
 */
export function unwrapEntityInput(value: JsonValue): JsonValue {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const keys = Object.keys(value);
  if (!keys.every((k) => k === 'args' || k === 'kwargs')) return value;
  const args = value.args;
  const kwargs = value.kwargs;
  const noArgs = args === undefined || (Array.isArray(args) && args.length === 0);
  const noKwargs =
    kwargs === undefined ||
    (kwargs !== null && typeof kwargs === 'object' && !Array.isArray(kwargs) && Object.keys(kwargs).length === 0);
  if (noArgs) return kwargs ?? {};
  if (noKwargs && Array.isArray(args) && args.length === 1) return args[0];
  return value;
}

/** Keys of the wrappers opentelemetry-instrumentation-langchain's callback handler writes. */
const LANGCHAIN_INPUT_KEYS = new Set(['input_str', 'inputs', 'tags', 'metadata', 'kwargs']);
const LANGCHAIN_OUTPUT_KEYS = new Set(['output', 'outputs', 'kwargs']);

function onlyKeys(o: { [k: string]: JsonValue }, allowed: Set<string>): boolean {
  return Object.keys(o).every((k) => allowed.has(k));
}

/**
 * The LangChain callback handler's wrappers (Traceloop opentelemetry-instrumentation-langchain):
 * a tool's input {"input_str", "tags", "metadata", "inputs", "kwargs"} is the inputs it was
 * given (else the input string), a chain's {"inputs", …} its inputs; an output
 * {"output" | "outputs", "kwargs"} is that output. Anything else is left as it is.
 */
function unwrapLangChain(value: JsonValue, input: boolean): JsonValue {
  if (value === null || typeof value !== 'object' || Array.isArray(value) || !('kwargs' in value)) return value;
  if (input) {
    if (!onlyKeys(value, LANGCHAIN_INPUT_KEYS) || !('input_str' in value || 'inputs' in value)) return value;
    const inputs = value.inputs;
    const hasInputs =
      inputs !== undefined &&
      inputs !== null &&
      !(typeof inputs === 'object' && !Array.isArray(inputs) && Object.keys(inputs).length === 0);
    return hasInputs ? inputs : (value.input_str ?? null);
  }
  if (!onlyKeys(value, LANGCHAIN_OUTPUT_KEYS) || !('output' in value || 'outputs' in value)) return value;
  const out = value.output ?? value.outputs ?? null;
  return langChainMessage(out)?.kwargs.content ?? out;
}

/** A LangChain message as its to_json() writes it: {lc: 1, type: "constructor", id: [...], kwargs}. */
function langChainMessage(v: JsonValue | undefined): { kwargs: { [k: string]: JsonValue } } | undefined {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || v.lc === undefined || v.type !== 'constructor')
    return undefined;
  const kwargs = v.kwargs;
  return kwargs !== null && typeof kwargs === 'object' && !Array.isArray(kwargs) ? { kwargs } : undefined;
}

/** A span of Traceloop's with OTel GenAI keys, read as those, from this layout. */
function readAsGenAi(span: SpanRecord, logs: readonly LogRecord[]): StepDraft | null {
  const step = otelGenAi.read(span, logs);
  if (step) step.layout = 'openllmetry';
  return step;
}

/** A task span whose output is a LangChain ToolMessage: a tool step (else context, null). */
function langChainToolTask(span: SpanRecord): StepDraft | null {
  const attrs = span.attributes;
  const output = attrs['traceloop.entity.output'];
  // Only a ToolMessage is worth parsing: tasks are most of a workflow's spans, their outputs large.
  if (typeof output !== 'string' || !output.includes('ToolMessage')) return null;
  const message = langChainMessage(parseJson(output));
  const k = message?.kwargs;
  if (!k || (k.type !== 'tool' && k.tool_call_id === undefined)) return null;
  const tool =
    str(k.name as string | undefined) ?? firstStr(attrs, ['traceloop.entity.name']) ?? span.name.replace(/\.task$/, '');
  const draft = emptyDraft(span, 'tool', tool, 'openllmetry');
  draft.tool = tool;
  draft.request = entityValue(attrs['traceloop.entity.input'], true);
  draft.response = orNull(canonicalValue(k.content));
  draft.toolCallId = str(k.tool_call_id as string | undefined);
  return draft;
}

/** The tool call a LangChain tool answered: the ToolMessage it returned names it. */
function langChainToolCallId(v: AttributeValue | undefined): string | null {
  const parsed = typeof v === 'string' ? parseJson(v) : undefined;
  if (parsed === undefined || parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  return str(langChainMessage(parsed.output)?.kwargs.tool_call_id as string | undefined);
}

/**
 * traceloop.entity.input / output are JSON.stringify of the value by construction, so they
 * are parsed whole (a JSON string literal included: the agent's answer arrives as "\"…\"");
 * the parsed value then folds like any other (JSON-shaped text inside is read as JSON).
 */
function entityValue(v: AttributeValue | undefined, unwrap: boolean): JsonValue | null {
  // Not a string (an SDK that set the value itself): read it like any other attribute value.
  if (typeof v !== 'string') return orNull(canonicalValue(toJson(v)));
  if (v === '') return null;
  const parsed = parseJson(v);
  if (parsed === undefined) return orNull(canonicalValue(v));
  const value = unwrapLangChain(parsed, unwrap);
  return orNull(canonicalValue(unwrap ? unwrapEntityInput(value) : value));
}

/** Legacy content: JSON-stringified when the message content was a parts array. */
function legacyContent(v: unknown, converse: boolean): unknown {
  if (typeof v !== 'string') return v;
  // The LangChain callback JSON-encodes an answer's text only when it is empty
  // (set_chat_response: `content is str` is never true), so a tool-call answer says '""'.
  if (v === '""') return undefined;
  if (!v.startsWith('[')) return v;
  const parsed = parseJson(v);
  // Bedrock Converse blocks ({text}, {toolUse}, {toolResult}: the Bedrock instrumentation's
  // json.dumps of a message's content) are read as the provider message reader reads them.
  return isPartsList(parsed) || (converse && isConverseContent(parsed)) ? parsed : v;
}

function legacyToolCalls(group: Attributes): unknown[] {
  return indexedGroups(group, 'tool_calls.').map((tc) => ({ id: tc.id, name: tc.name, arguments: tc.arguments }));
}

/**
 * gen_ai.prompt.{i}.* / gen_ai.completion.{i}.* → messages; undefined when there are none.
 * Two answer shapes are not messages of their own: the Anthropic instrumentation writes a
 * thinking block as a completion whose role is `thinking` (the answer follows it), which
 * becomes the reasoning part of the answer; the OpenAI one writes a refusal in `refusal`
 * instead of `content`.
 */
function legacyMessages(attrs: Attributes, prefix: string, answer: boolean, converse = false): Message[] | undefined {
  const groups = indexedGroups(attrs, prefix);
  if (!groups.length) return undefined;
  const out: Message[] = [];
  let thinking: { parts: unknown[]; finishReason: unknown } | null = null;
  for (const g of groups) {
    // Completion and text-completion wrappers write the prompt under its role's name
    // (gen_ai.prompt.0.user, gen_ai.prompt.0.system) instead of role and content.
    if (g.role === undefined && g.content === undefined) {
      const named = ROLE_KEYS.find((k) => typeof g[k] === 'string');
      if (named) {
        out.push(...fromProviderMessage({ role: named, content: g[named] }));
        continue;
      }
    }
    if (answer && g.role === 'thinking') {
      thinking ??= { parts: [], finishReason: g.finish_reason };
      thinking.parts.push({ type: 'thinking', thinking: g.content });
      continue;
    }
    let content = legacyContent(g.content, converse);
    if (content === undefined && typeof g.refusal === 'string') content = [{ type: 'refusal', refusal: g.refusal }];
    if (thinking) content = [...thinking.parts, ...asParts(content)];
    const reasoning = answer ? reasoningSummaries(g.reasoning) : [];
    if (reasoning.length > 0) content = [...reasoning, ...asParts(content)];
    const toolCalls = legacyToolCalls(g);
    // The LangChain callback names a message type it does not map (AIMessageChunk, ...) `unknown`.
    const role =
      g.role === 'unknown' && toolCalls.length > 0 ? 'assistant' : (g.role ?? (answer ? 'assistant' : 'user'));
    const raw: { [k: string]: unknown } = {
      role,
      content,
      tool_calls: toolCalls,
      tool_call_id: g.tool_call_id,
    };
    if (g['function_call.name'] !== undefined)
      raw.function_call = { name: g['function_call.name'], arguments: g['function_call.arguments'] };
    out.push(...fromProviderMessage(raw, answer ? (g.finish_reason ?? thinking?.finishReason) : undefined));
    thinking = null;
  }
  // thinking with no answer after it (a stream cut short)
  if (thinking) out.push(...fromProviderMessage({ role: 'assistant', content: thinking.parts }, thinking.finishReason));
  return out;
}

const ROLE_KEYS = ['user', 'system', 'assistant'];

/** The MCP instrumentation's FastMCP server tool input, {tool_name: <this tool>, arguments}: the arguments. */
function fastMcpArguments(value: JsonValue | null, tool: string): JsonValue | null {
  const o = asObject(value);
  return o && Object.keys(o).length === 2 && o.tool_name === tool && 'arguments' in o ? o.arguments : value;
}

/** The MCP instrumentation's client tool output, {result, is_error}: the result. */
function mcpResult(value: JsonValue | null): JsonValue | null {
  const o = asObject(value);
  return o && Object.keys(o).length === 2 && 'result' in o && typeof o.is_error === 'boolean' ? o.result : value;
}

/** The OpenAI Responses API wrapper's completion.N.reasoning: the summaries' JSON → reasoning parts. */
function reasoningSummaries(v: unknown): unknown[] {
  const summaries = typeof v === 'string' ? parseJson(v) : undefined;
  if (!Array.isArray(summaries)) return [];
  return summaries.flatMap((r) => {
    const text = asObject(r)?.text;
    return typeof text === 'string' && text !== '' ? [{ type: 'reasoning', text }] : [];
  });
}

/** Content as a parts list, to put other parts before it. */
function asParts(content: unknown): unknown[] {
  if (content === undefined || content === null || content === '') return [];
  if (Array.isArray(content)) return content;
  return typeof content === 'string' ? [{ type: 'text', text: content }] : [content];
}

function readLlm(span: SpanRecord, logs: readonly LogRecord[], draft: StepDraft): StepDraft {
  const attrs = span.attributes;
  let { request, response } = genAiMessages(attrs);
  const bedrock = span.scope.name.includes('bedrock');
  request ??= legacyMessages(attrs, 'gen_ai.prompt.', false, bedrock);
  response ??= legacyMessages(attrs, 'gen_ai.completion.', true, bedrock);
  // Traceloop before the gen_ai.* names: llm.prompts.N.* / llm.completions.N.*, or a
  // completion's prompts as a list of texts (llm.prompts = [prompt]).
  request ??= legacyMessages(attrs, 'llm.prompts.', false, bedrock) ?? promptMessages(attrs['llm.prompts']);
  response ??= legacyMessages(attrs, 'llm.completions.', true, bedrock);
  // use_legacy_attributes=False: the content is in GenAI events (log records) instead
  if (request === undefined || response === undefined) {
    const events = readEventContent(span, logsOfSpan(span, logs));
    request ??= events?.request;
    response ??= events?.response;
  }
  draft.model = llmModel(attrs);
  draft.requestModel = llmRequestModel(attrs);
  draft.request = recorded(request);
  draft.response = recorded(response);
  // Traceloop JS 0.27's Anthropic instrumentation reports Anthropic's raw input_tokens
  // (cache excluded) and the cache counts beside it (reference: genai-layouts.md (a)).
  draft.tokens = genAiTokens(attrs, span.scope.name === '@traceloop/instrumentation-anthropic');
  return draft;
}

/** A model call: chat/completion request type, an LLM operation, or model-call keys. */
function isModelCall(attrs: Attributes): boolean {
  const requestType = str(attrs['llm.request.type']);
  // Traceloop's chat / completion; LiteLLM's OpenTelemetry callback writes the key too, with
  // its call type (acompletion, ...), named as its gen_ai.operation.name is.
  if (requestType !== null) return isLlmOperation(requestType);
  return (
    genAiKind(attrs) === 'llm' ||
    attrs['gen_ai.request.model'] !== undefined ||
    attrs['gen_ai.input.messages'] !== undefined ||
    hasIndexedKey(attrs, 'gen_ai.prompt.') ||
    hasIndexedKey(attrs, 'llm.prompts.')
  );
}

export const openllmetry: Dialect = {
  name: 'openllmetry',
  matches(span) {
    const attrs = span.attributes;
    // llm.request.type is Traceloop's own key: with content capture off a legacy span has no
    // indexed keys, and an embeddings span (llm.request.type=embedding) must not be read by
    // the OTel GenAI dialect as a model call because it carries gen_ai.request.model.
    return (
      attrs['traceloop.span.kind'] !== undefined ||
      isTraceloopScope(span) ||
      attrs['llm.request.type'] !== undefined ||
      hasIndexedKey(attrs, 'gen_ai.prompt.') ||
      hasIndexedKey(attrs, 'gen_ai.completion.') ||
      hasIndexedKey(attrs, 'llm.prompts.') ||
      hasIndexedKey(attrs, 'llm.completions.')
    );
  },
  read(span, logs) {
    const attrs = span.attributes;
    const spanKind = str(attrs['traceloop.span.kind']);
    if (spanKind === 'tool') {
      // The openai-agents instrumentation records a function call with the GenAI tool keys
      // (gen_ai.tool.call.arguments / result), not traceloop.entity.*.
      if (
        attrs['traceloop.entity.input'] === undefined &&
        attrs['traceloop.entity.output'] === undefined &&
        hasToolCallKeys(attrs)
      ) {
        const step = readAsGenAi(span, logs);
        if (step)
          step.tool =
            firstStr(attrs, ['gen_ai.tool.name', 'traceloop.entity.name']) ?? span.name.replace(/\.tool$/, '');
        return step;
      }
      const draft = emptyDraft(span, 'tool', span.name, 'openllmetry');
      draft.tool = firstStr(attrs, ['traceloop.entity.name']) ?? span.name.replace(/\.tool$/, '');
      draft.request = fastMcpArguments(entityValue(attrs['traceloop.entity.input'], true), draft.tool);
      draft.response = mcpResult(entityValue(attrs['traceloop.entity.output'], false));
      draft.toolCallId = str(attrs['gen_ai.tool.call.id']) ?? langChainToolCallId(attrs['traceloop.entity.output']);
      return draft;
    }
    if (spanKind === 'agent') {
      const name = firstStr(attrs, ['traceloop.entity.name', 'gen_ai.agent.name']) ?? span.name.replace(/\.agent$/, '');
      const draft = emptyDraft(span, 'agent', name, 'openllmetry');
      // The SDK's AI SDK transform makes an agent span of the outer call, its entity input and
      // output the GenAI messages' JSON.
      draft.request =
        recorded(genAiInput(attrs['traceloop.entity.input'])) ?? entityValue(attrs['traceloop.entity.input'], true);
      draft.response =
        recorded(genAiOutput(attrs['traceloop.entity.output'], [])) ??
        entityValue(attrs['traceloop.entity.output'], false);
      return draft;
    }
    // The JS LangChain callback traces a tool run as a task whose output is the ToolMessage.
    if (spanKind === 'task') return langChainToolTask(span);
    if (spanKind !== null) return null; // workflow, session, unknown: context around steps
    // An AI SDK call span (generateText, streamText, …) the Traceloop SDK rewrote with the
    // legacy indexed keys repeats its model calls' prompt and answer: context, as in vercel-ai.
    const aiOp = aiSdkOperation(span);
    if (aiOp !== null && !isAiSdkModelCall(aiOp)) return null;
    // An instrumentation span (the SDK stamps its keys on other libraries' spans too).
    const op = genAiKind(attrs);
    if (op === 'tool' || op === 'agent') return readAsGenAi(span, logs);
    if (op === null || !isModelCall(attrs)) return null; // embeddings, rerank, vector DB, HTTP
    const draft = emptyDraft(span, 'llm', span.name, 'openllmetry');
    draft.params = genAiParams(attrs);
    draft.costUsd = reportedCost(attrs);
    return readLlm(span, logs, draft);
  },
};
