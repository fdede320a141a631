/**
 * @module normalize/dialects/openinference
 * OpenInference (Arize / Phoenix): openinference.span.kind LLM / TOOL / AGENT are steps,
 * everything else (CHAIN, RETRIEVER, EMBEDDING, RERANKER, GUARDRAIL, EVALUATOR, PROMPT) is
 * context. An LLM span carries its messages twice:
 * - flattened: llm.{input,output}_messages.{i}.message.{role,content,tool_call_id},
 *   ….message.tool_calls.{j}.tool_call.{id,function.name,function.arguments} and, from the
 *   Anthropic instrumentation, ….message.contents.{k}.message_content.{type,text} plus the
 *   same tool calls again under ….contents.{k}.tool_call.*;
 * - the provider's own bodies in input.value / output.value (application/json).
 * The provider body is preferred when it is more complete, because the flattened
 * keys drop things (the Anthropic system prompt; all but the last of parallel tool results).
 * Streamed calls have plain-text output.value, so the flattened answer is used there.
 */
import type { Attributes, SpanRecord } from '../../spans/span-record.js';
import type { Message, StepDraft } from '../step.js';
import type { JsonValue } from '../../json/json-value.js';
import { asObject, firstNum, firstStr, indexedGroups, parseJson, readJsonShaped, str } from '../attrs.js';
import { readPythonLiteral } from '../python-literal.js';
import {
  langChainResponseModel,
  langChainToolResult,
  messagesFromLangChainInputs,
  messagesFromLangChainResult,
} from '../langchain-messages.js';
import { canonicalFinishReason, canonicalValue, promptMessages } from '../messages.js';
import { fromProviderMessage, messagesFromRequestBody, messagesFromResponseBody } from '../provider-messages.js';
import { makeTokens, providerParams, reportedCost } from '../usage.js';
import { isResponse, isResponsesInput, messagesFromResponse, messagesFromResponsesInput } from '../responses-items.js';
import { recorded } from './otel-genai.js';
import { canonicalJson } from '../../json/canonical.js';
import { comparableForm } from '../comparable.js';
import { isDspyOutputs, messagesFromDspyOutputs } from '../dspy-outputs.js';
import { isOpenAiAgentsHandoff, isOpenAiAgentsTraceRoot } from './openinference-openai-agents.js';
import { emptyDraft, orNull, type Dialect } from './types.js';

/** One flattened message group → canonical messages (contents and tool calls deduplicated). */
function flatMessage(g: Attributes, finishReason?: unknown): Message[] {
  const toolCalls = indexedGroups(g, 'message.tool_calls.').map((tc) => ({
    id: tc['tool_call.id'],
    name: tc['tool_call.function.name'],
    arguments: tc['tool_call.function.arguments'],
  }));
  const seen = new Set(toolCalls.map((tc) => tc.id).filter((id) => id !== undefined));
  const parts: { [k: string]: unknown }[] = [];
  let toolCallId = g['message.tool_call_id'];
  for (const c of indexedGroups(g, 'message.contents.')) {
    const type = str(c['message_content.type']) ?? (c['tool_call.id'] !== undefined ? 'tool_use' : 'text');
    if (c['tool_call.function.name'] !== undefined) {
      // The Anthropic instrumentation writes each tool_use block here and under tool_calls.
      if (!seen.has(c['tool_call.id']))
        toolCalls.push({
          id: c['tool_call.id'],
          name: c['tool_call.function.name'],
          arguments: c['tool_call.function.arguments'],
        });
    } else if (type === 'image') {
      parts.push({ type: 'image_url', image_url: { url: c['message_content.image.image.url'] } });
    } else {
      parts.push({ type, text: c['message_content.text'] });
    }
    // BeeAI writes a tool result's id beside its content part
    if (toolCallId === undefined && typeof c['message.tool_call_id'] === 'string')
      toolCallId = c['message.tool_call_id'];
  }
  // OpenAI's legacy function calling: message.function_call_name / function_call_arguments_json
  // (OpenInference semantic conventions), the same call as a tool call without an id.
  const functionCall =
    g['message.function_call_name'] !== undefined
      ? { name: g['message.function_call_name'], arguments: g['message.function_call_arguments_json'] }
      : undefined;
  const content = g['message.content'] ?? (parts.length ? parts : undefined);
  // The Bedrock instrumentation writes a model's tool_use block as a message of role `tool`
  // holding the call (and its id as tool_call_id): a call the assistant made, not a result.
  const call = g['message.role'] === 'tool' && toolCalls.length > 0 && content === undefined;
  return fromProviderMessage(
    {
      role: call ? 'assistant' : g['message.role'],
      content,
      tool_calls: toolCalls,
      tool_call_id: call ? undefined : toolCallId,
      function_call: functionCall,
    },
    finishReason,
  );
}

function flatMessages(attrs: Attributes, prefix: string, finishReason?: unknown): Message[] | undefined {
  const groups = indexedGroups(attrs, prefix);
  if (!groups.length) return undefined;
  return groups.flatMap((g, i) => autoGenMessage(g) ?? flatMessage(g, i === 0 ? finishReason : undefined));
}

/**
 * AutoGen's messages as openinference-instrumentation-autogen-agentchat flattens them: a
 * FunctionExecutionResultMessage as role `function` with each result JSON in function.{j}
 * ({name, content, call_id, is_error}); an assistant's FunctionCalls as the JSON of their
 * Python reprs in message.content. Undefined for any other message.
 */
function autoGenMessage(g: Attributes): Message[] | undefined {
  if (g['message.role'] === 'function') {
    const results = Object.keys(g)
      .filter((k) => /^function\.\d+$/.test(k))
      .sort((a, b) => Number(a.slice(9)) - Number(b.slice(9)));
    if (results.length === 0) return undefined;
    return results.flatMap((k) => {
      const r = asObject(typeof g[k] === 'string' ? parseJson(g[k] as string) : undefined);
      return r ? fromProviderMessage({ role: 'tool', content: r.content, tool_call_id: r.call_id }) : [];
    });
  }
  const text = g['message.content'];
  if (g['message.role'] !== 'assistant' || typeof text !== 'string' || !text.startsWith('["FunctionCall('))
    return undefined;
  const reprs = parseJson(text);
  if (!Array.isArray(reprs)) return undefined;
  const calls = reprs.map((r) => (typeof r === 'string' ? FUNCTION_CALL_REPR.exec(r) : null));
  if (calls.some((c) => c === null)) return undefined;
  return fromProviderMessage({
    role: 'assistant',
    tool_calls: calls.map((c) => ({ id: c![1], name: c![3], arguments: pythonString(c![2]) })),
  });
}

/** FunctionCall(id='call_1', arguments='{"city": "Paris"}', name='get_weather') */
const FUNCTION_CALL_REPR = /^FunctionCall\(id='([^']*)', arguments='(.*)', name='([^']*)'\)$/s;

/** The text of a single-quoted Python string literal's body (its escapes undone). */
function pythonString(body: string): string {
  const literal = readPythonLiteral(`['${body}']`);
  return Array.isArray(literal) && typeof literal[0] === 'string' ? literal[0] : body;
}

/** What openinference-instrumentation writes for a hidden input or output value. */
const REDACTED = '__REDACTED__';

/**
 * input.value / output.value parsed when the span says it is JSON (or it plainly is). With
 * `anyMime`, a JSON object labelled text/plain too: the Bedrock instrumentation labels the raw
 * model answer so, and a caller that reads it as a provider body knows it when it sees one.
 */
function bodyOf(attrs: Attributes, which: 'input' | 'output', anyMime = false): JsonValue | undefined {
  const text = attrs[`${which}.value`];
  if (typeof text !== 'string' || text === '') return undefined;
  const mime = str(attrs[`${which}.mime_type`]);
  if (mime !== null && mime !== 'application/json' && !(anyMime && text.startsWith('{'))) return undefined;
  return parseJson(text);
}

/** What messages say: each content part (a text is one), each tool call, each tool call answered. */
function saying(messages: Message[]): number {
  let n = 0;
  for (const m of messages) {
    if (m.content !== undefined) n += Array.isArray(m.content) ? m.content.length : 1;
    if (m.tool_call_id !== undefined) n++;
    n += m.tool_calls?.length ?? 0;
  }
  return n;
}

/**
 * The provider body when it says at least as much as the flattened keys, else the flattened.
 * "As much" counts what the messages carry, not the messages: a body whose messages are in a
 * shape the provider reader does not know (a framework's own serialisation under `messages`)
 * reads as contentless messages and must not replace flattened keys that had the content; a
 * body that holds a turn's text and calls as one message (OpenAI Responses items), where the
 * flattened keys have a message for each, says the same.
 */
function moreComplete(body: Message[] | undefined, flat: Message[] | undefined): Message[] | undefined {
  if (body === undefined) return flat;
  if (flat === undefined) return body;
  if (saying(body) >= saying(flat)) return withRecordedArguments(body, flat);
  return flat;
}

/**
 * A body's tool calls with the arguments' text where the flattened keys recorded it: a body
 * holds Anthropic's tool input as an object, which parsing has rounded (an integer past
 * 2^53), while tool_call.function.arguments is the instrumentation's text of it. Taken only
 * where both say the same, and matched by call id.
 */
function withRecordedArguments(body: Message[], flat: Message[]): Message[] {
  const texts = new Map<string, string>();
  for (const m of flat)
    for (const c of m.tool_calls ?? []) if (c.id && typeof c.arguments === 'string') texts.set(c.id, c.arguments);
  if (texts.size === 0) return body;
  const sameAs = (text: string, value: JsonValue) =>
    canonicalJson(comparableForm(text)) === canonicalJson(comparableForm(value));
  for (const m of body)
    for (const c of m.tool_calls ?? []) {
      const text = c.id === undefined ? undefined : texts.get(c.id);
      if (
        text !== undefined &&
        c.arguments !== undefined &&
        typeof c.arguments !== 'string' &&
        sameAs(text, c.arguments)
      )
        c.arguments = text;
    }
  return body;
}

/**
 * The recorded text of a value ioValue parsed, while the value is read as it is: readers
 * look into the parsed value (a framework's wrapper), and a value kept whole is stored as
 * the text (asRecorded), which keeps its numbers and spacing exactly.
 */
const recordedTexts = new WeakMap<object, string>();

/** A value ioValue parsed and nothing unwrapped, as its recorded text; any other value as it is. */
function asRecorded(value: JsonValue | null): JsonValue | null {
  return value !== null && typeof value === 'object' ? (recordedTexts.get(value) ?? value) : value;
}

/**
 * A TOOL or AGENT span's input/output value: JSON by mime type, else text (kept as
 * recorded). JSON is parsed so that readers can look into it; asRecorded gives its text back.
 */
function ioValue(attrs: Attributes, which: 'input' | 'output'): JsonValue | null {
  const text = attrs[`${which}.value`];
  if (typeof text !== 'string') return null;
  const parsed = str(attrs[`${which}.mime_type`]) === 'application/json' ? parseJson(text) : readJsonShaped(text);
  if (parsed === undefined || parsed === text) return orNull(canonicalValue(text));
  const value = canonicalValue(parsed);
  if (value === parsed && parsed !== null && typeof parsed === 'object') recordedTexts.set(parsed, text);
  return orNull(value);
}

/**
 * A request body: the provider's, or a LangChain chat-model run's inputs
 * {"messages": [[serialised messages]]} (openinference-instrumentation-langchain _tracer.py).
 */
function requestFromBody(body: JsonValue | undefined, invocation: JsonValue | undefined): Message[] | undefined {
  const messages = asObject(body)?.messages;
  const langChain = Array.isArray(messages) ? messagesFromLangChainInputs(messages) : undefined;
  if (langChain) return langChain;
  // OpenAI Responses: the input items (openai-agents; the instructions are among the
  // invocation parameters), or a responses.create request {input, instructions, ...}
  if (isResponsesInput(body) || (Array.isArray(body) && isResponse(invocation)))
    return messagesFromResponsesInput(body, asObject(invocation)?.instructions);
  const request = asObject(body);
  if (
    request &&
    request.input !== undefined &&
    request.messages === undefined &&
    request.contents === undefined &&
    (typeof request.input === 'string' || isResponsesInput(request.input))
  ) {
    return messagesFromResponsesInput(request.input, request.instructions);
  }
  return messagesFromRequestBody(body);
}

/**
 * A response body: the provider's, a Responses API Response, a LangChain LLMResult
 * {"generations": [[...]]}, the answer's messages as they are (Agno: a list of them, or
 * {"messages": [...]} when streamed), AutoGen's CreateResult or DSPy's output objects.
 */
function responseFromBody(body: JsonValue | undefined): Message[] | undefined {
  const b = asObject(body);
  const answers = Array.isArray(body)
    ? body
    : Array.isArray(b?.messages) && Object.keys(b!).length === 1
      ? (b!.messages as JsonValue[])
      : undefined;
  if (answers && answers.length > 0 && answers.every((m) => asObject(m)?.role === 'assistant')) {
    // (the Anthropic instrumentation's stream accumulator keeps stop_reason on the message)
    return answers.flatMap((m) => fromProviderMessage(m, asObject(m)?.stop_reason ?? asObject(m)?.finish_reason));
  }
  if (b && isCreateResult(b)) return fromCreateResult(b);
  if (isDspyOutputs(body)) return messagesFromDspyOutputs(body);
  return (
    (b && Array.isArray(b.generations) ? messagesFromLangChainResult(b) : undefined) ??
    messagesFromResponse(body) ??
    messagesFromResponseBody(body)
  );
}

/** AutoGen's CreateResult (openinference-instrumentation-autogen-agentchat's output.value). */
function isCreateResult(b: { [k: string]: JsonValue }): boolean {
  return 'finish_reason' in b && 'content' in b && 'cached' in b;
}

/** Its content is the answer's text or its FunctionCalls ({id, arguments, name}); thought, its reasoning. */
function fromCreateResult(b: { [k: string]: JsonValue }): Message[] {
  const calls = Array.isArray(b.content) ? b.content : [];
  const text = typeof b.content === 'string' ? b.content : undefined;
  const content =
    typeof b.thought === 'string' && b.thought !== ''
      ? [{ type: 'reasoning', text: b.thought }, ...(text ? [{ type: 'text', text }] : [])]
      : text;
  return fromProviderMessage({ role: 'assistant', content, tool_calls: calls }, b.finish_reason);
}

/**
 * A TOOL span's output, and the tool call it answered when the tool returned a LangChain
 * ToolMessage (openinference-instrumentation-langchain writes it as JSON: to_json() or
 * model_dump(), depending on the version); other outputs read as ioValue does.
 */
function toolOutput(attrs: Attributes): { value: JsonValue | null; toolCallId: string | undefined } {
  // (the JS LangChain instrumentation records the run's outputs, {output: ToolMessage})
  const body = bodyOf(attrs, 'output');
  const wrapped = asObject(body);
  const result = langChainToolResult(
    wrapped && Object.keys(wrapped).length === 1 && 'output' in wrapped ? wrapped.output : body,
  );
  if (result) return { value: orNull(canonicalValue(result.content)), toolCallId: result.toolCallId };
  const value = ioValue(attrs, 'output');
  // LlamaIndex's ToolOutput as model_dump() writes it: the tool's return value is raw_output.
  const output = asObject(value);
  if (output && 'raw_output' in output && 'tool_name' in output && 'content' in output) {
    return { value: orNull(canonicalValue(output.raw_output ?? output.content)), toolCallId: undefined };
  }
  return { value, toolCallId: undefined };
}

/**
 * A TOOL span's input. LangChain gives its tracers a structured tool input as str(dict), so
 * openinference-instrumentation-langchain (_tracer.py _convert_io) records "{'city': 'Paris'}"
 * as text: from that instrumentation, such text is read as the value it is the repr of.
 */
function toolInput(span: SpanRecord): JsonValue | null {
  const value = ioValue(span.attributes, 'input');
  const input = asObject(value);
  // CrewAI (openinference-instrumentation-crewai, ToolUsage._use) records the agent's parsed
  // action: {tool_string, tool, calling: {tool_name, arguments}}; the call's arguments are the input.
  const calling = asObject(input?.calling);
  if (input && 'tool_string' in input && calling && calling.arguments !== undefined)
    return orNull(canonicalValue(calling.arguments));
  // LlamaIndex and smolagents record a tool call's bound arguments, {"kwargs": {...}} (with
  // "args" when there were positional ones; smolagents adds sanitize_inputs_outputs).
  const scope = span.scope.name;
  if (
    input &&
    (scope.startsWith('openinference.instrumentation.llama_index') ||
      scope.startsWith('openinference.instrumentation.smolagents')) &&
    asObject(input.kwargs) &&
    Object.keys(input).every(
      (k) =>
        k === 'kwargs' ||
        k === 'sanitize_inputs_outputs' ||
        (k === 'args' && Array.isArray(input.args) && input.args.length === 0),
    )
  ) {
    return orNull(canonicalValue(input.kwargs));
  }
  if (typeof value !== 'string' || !span.scope.name.startsWith('openinference.instrumentation.langchain')) return value;
  const literal = readPythonLiteral(value);
  return literal === undefined ? value : orNull(canonicalValue(literal));
}

function isTemplateRendering(attrs: Attributes): boolean {
  return (
    attrs['llm.prompt_template.template'] !== undefined &&
    attrs['llm.model_name'] === undefined &&
    !Object.keys(attrs).some((k) => k.startsWith('llm.input_messages.') || k.startsWith('llm.output_messages.'))
  );
}

/**
 * An AGENT span's output. CrewAI (openinference-instrumentation-crewai, Task._execute_core)
 * records the TaskOutput as model_dump() writes it: the agent's answer is its `raw`.
 */
function agentOutput(value: JsonValue | null): JsonValue | null {
  const task = asObject(value);
  if (task && 'raw' in task && 'description' in task && 'output_format' in task)
    return orNull(canonicalValue(task.raw));
  return value;
}

/**
 * A TOOL span with no input.value: the arguments of the call it records in its flattened
 * input message (Bedrock Agents action groups, whose parameters are [{name, type, value}]).
 */
function calledWith(attrs: Attributes): JsonValue | null {
  const recorded = flatMessages(attrs, 'llm.input_messages.')?.flatMap((m) => m.tool_calls ?? [])[0]?.arguments;
  if (recorded === undefined) return null;
  const args = typeof recorded === 'string' ? readJsonShaped(recorded) : recorded;
  if (
    Array.isArray(args) &&
    args.length > 0 &&
    args.every((p) => typeof asObject(p)?.name === 'string' && 'value' in (asObject(p) ?? {}))
  ) {
    return Object.fromEntries(args.map((p) => [(p as { name: string }).name, (p as { value: JsonValue }).value]));
  }
  return recorded;
}

function readLlm(span: SpanRecord, draft: StepDraft): StepDraft {
  const attrs = span.attributes;
  const finish = attrs['llm.finish_reason'];
  // llm.invocation_parameters is the request minus its messages; without it, the body says the same.
  const inputBody = bodyOf(attrs, 'input');
  const invocation =
    typeof attrs['llm.invocation_parameters'] === 'string' ? parseJson(attrs['llm.invocation_parameters']) : inputBody;
  let request = moreComplete(requestFromBody(inputBody, invocation), flatMessages(attrs, 'llm.input_messages.'));
  // A prompt given as text (a Responses call with a string input) is recorded as text alone.
  // (OPENINFERENCE_HIDE_INPUTS writes __REDACTED__ there: nothing recorded)
  const prompt = attrs['input.value'];
  if (
    request === undefined &&
    typeof prompt === 'string' &&
    prompt !== '' &&
    prompt !== REDACTED &&
    inputBody === undefined
  ) {
    request = fromProviderMessage({ role: 'user', content: prompt });
  }
  // A completions API call (LlamaIndex's complete(), the Anthropic instrumentation's
  // completions): llm.prompts is the list of prompt texts, and the answer is output.value.
  const completion = promptMessages(attrs['llm.prompts']);
  request ??= completion;
  let response = moreComplete(
    responseFromBody(bodyOf(attrs, 'output', true)),
    flatMessages(attrs, 'llm.output_messages.', finish),
  );
  const text = attrs['output.value'];
  if (
    response === undefined &&
    completion !== undefined &&
    typeof text === 'string' &&
    bodyOf(attrs, 'output') === undefined
  )
    response = fromProviderMessage({ role: 'assistant', content: text }, finish);
  // An answer body that carries no stop reason (the Bedrock instrumentation records the bare
  // output message) takes the span's llm.finish_reason, as the flattened answer does.
  const answer = response?.find((m) => m.role === 'assistant');
  if (answer && answer.finish_reason === undefined) {
    const f = canonicalFinishReason(finish);
    if (f !== undefined) answer.finish_reason = f;
  }
  draft.request = recorded(request);
  draft.response = recorded(response);
  draft.params = providerParams(invocation);
  const invokedModel =
    invocation && typeof invocation === 'object' && !Array.isArray(invocation) ? str(invocation.model as string) : null;
  // llm.model_name holds the request model until the response model is known, then that;
  // LangChain's holds the request model only, and its result the model that answered.
  draft.model =
    firstStr(attrs, ['llm.response.model_name']) ??
    langChainResponseModel(bodyOf(attrs, 'output', true)) ??
    firstStr(attrs, ['llm.model_name', 'llm.request.model_name']) ??
    invokedModel;
  // llm.model_name is no request model once the answer named another: only the keys that are.
  draft.requestModel =
    firstStr(attrs, ['llm.request.model_name']) ?? invokedModel ?? str(asObject(inputBody)?.model as string);
  draft.tokens = makeTokens(
    firstNum(attrs, ['llm.token_count.prompt']), // includes cache reads and writes (OI-Anthropic 0.2.8)
    firstNum(attrs, ['llm.token_count.completion']),
    firstNum(attrs, ['llm.token_count.prompt_details.cache_read']),
    firstNum(attrs, ['llm.token_count.prompt_details.cache_write']),
  );
  draft.costUsd = reportedCost(attrs);
  return draft;
}

export const openinference: Dialect = {
  name: 'openinference',
  matches(span) {
    return span.attributes['openinference.span.kind'] !== undefined;
  },
  read(span) {
    const attrs = span.attributes;
    const kind = (str(attrs['openinference.span.kind']) ?? '').toUpperCase();
    if (kind === 'LLM') {
      // Haystack's PromptBuilder is an LLM span that renders a template: no model, no messages
      if (span.scope.name.startsWith('openinference.instrumentation.haystack') && isTemplateRendering(attrs))
        return null;
      return readLlm(span, emptyDraft(span, 'llm', span.name, 'openinference'));
    }
    if (kind === 'TOOL') {
      if (isOpenAiAgentsHandoff(span)) return null;
      const draft = emptyDraft(span, 'tool', span.name, 'openinference');
      // openinference-core's traceTool sets no tool.* keys: the span name is the tool name.
      draft.tool = firstStr(attrs, ['tool.name']) ?? span.name;
      const output = toolOutput(attrs);
      draft.toolCallId = firstStr(attrs, ['tool.id', 'tool_call.id']) ?? output.toolCallId ?? null;
      draft.request = asRecorded(toolInput(span)) ?? calledWith(attrs);
      draft.response = asRecorded(output.value);
      return draft;
    }
    if (kind === 'AGENT') {
      if (isOpenAiAgentsTraceRoot(span)) return null;
      const draft = emptyDraft(span, 'agent', firstStr(attrs, ['agent.name']) ?? span.name, 'openinference');
      draft.request = ioValue(attrs, 'input');
      draft.response = agentOutput(ioValue(attrs, 'output'));
      return draft;
    }
    return null;
  },
};
