/**
 * @module normalize/dialects/otel-genai
 * OpenTelemetry GenAI semantic conventions: spans classified by gen_ai.operation.name,
 * content in gen_ai.input.messages / gen_ai.output.messages / gen_ai.system_instructions
 * (JSON strings or structured values), or beside the span in events and log records
 * (otel-genai-events.ts; the step's layout is then `otel-genai-events`). Also reads the
 * Anthropic SDK's built-in spans (anthropic.messages.create, the tool runner's spans), which
 * use the same keys plus a few of their own.
 */
import type { AttributeValue, Attributes, LogRecord, SpanRecord } from '../../spans/span-record.js';
import type { Message, StepDraft, StepKind } from '../step.js';
import type { JsonValue } from '../../json/json-value.js';
import { asObject, firstStr, jsonAttr, str, toJson } from '../attrs.js';
import { canonicalFinishReason, canonicalValue, carriesContent } from '../messages.js';
import { genAiInput, genAiOutput, genAiSystem } from '../genai-parts.js';
import { genAiParams, genAiTokens, reportedCost } from '../usage.js';
import { emptyDraft, orNull, type Dialect } from './types.js';
import { isGenAiEventName, logEventName, logsOfSpan, readEventContent, readToolEvents } from './otel-genai-events.js';
import {
  fromProviderMessage,
  fromProviderMessages,
  messagesFromRequestBody,
  messagesFromResponseBody,
} from '../provider-messages.js';

const LLM_OPERATIONS = new Set([
  'chat',
  'generate_content',
  'text_completion',
  'completion',
  'responses',
  // Semantic Kernel (and early Microsoft agent-framework): model_diagnostics' operation names
  'chat.completions',
  'chat.streaming_completions',
  'text.completions',
  'text.streaming_completions',
  // LiteLLM's OpenTelemetry callback names the operation by its call type; async ones too
  'acompletion',
  'atext_completion',
  'aresponses',
]);

/** Whether an operation name (or a request type named the same way) is a model call. */
export function isLlmOperation(op: string): boolean {
  return LLM_OPERATIONS.has(op);
}

/** The operation → step kind; embeddings, retrieval, create_agent, workflows, memory ops are context. */
export function genAiKind(attrs: Attributes): StepKind | null | undefined {
  return kindOfOperation(str(attrs['gen_ai.operation.name']));
}

function kindOfOperation(op: string | null): StepKind | null | undefined {
  if (op === null) return undefined;
  if (LLM_OPERATIONS.has(op)) return 'llm';
  if (op === 'execute_tool') return 'tool';
  if (op === 'invoke_agent') return 'agent';
  return null;
}

/** Operations whose span name the conventions fix as `{operation} {…}` (SC gen-ai-spans.md, agent-spans). */
const NAMED_OPERATIONS = new Set([
  ...LLM_OPERATIONS,
  'embeddings',
  'retrieval',
  'execute_tool',
  'invoke_agent',
  'create_agent',
  'invoke_workflow',
]);

/**
 * gen_ai.operation.name is required, but a span that lacks it still names its operation
 * (`embeddings text-embedding-3`, `execute_tool get_weather`): read the span name's first word
 * before guessing from the keys, so an embeddings span with a request model is not a model call.
 */
function operationOf(span: SpanRecord): string | null {
  const op = str(span.attributes['gen_ai.operation.name']);
  if (op !== null) return op;
  const first = span.name.split(' ', 1)[0];
  if (NAMED_OPERATIONS.has(first)) return first;
  return isPydanticAgentRun(span) ? 'invoke_agent' : null;
}

/**
 * pydantic-ai's agent run span (`invoke_agent {agent}`; `agent run` before its instrumentation
 * version 3) names no operation: it is known by the keys pydantic-ai sets on it at its end
 * (pydantic_ai.all_messages; all_messages_events in version 1, whose content is not read;
 * final_result), or by its name with the agent_name it sets at its start.
 */
function isPydanticAgentRun(span: SpanRecord): boolean {
  const attrs = span.attributes;
  return (
    attrs['pydantic_ai.all_messages'] !== undefined ||
    attrs['all_messages_events'] !== undefined ||
    (attrs['agent_name'] !== undefined &&
      (attrs['final_result'] !== undefined || span.name === 'agent run' || span.name.startsWith('invoke_agent ')))
  );
}

/** Keys only a tool execution carries (execute_tool spans). */
export function hasToolCallKeys(attrs: Attributes): boolean {
  return (
    attrs['gen_ai.tool.call.id'] !== undefined ||
    attrs['gen_ai.tool.call.arguments'] !== undefined ||
    attrs['gen_ai.tool.call.result'] !== undefined
  );
}

function hasGenAiKeys(attrs: Attributes): boolean {
  return (
    attrs['gen_ai.operation.name'] !== undefined ||
    attrs['gen_ai.input.messages'] !== undefined ||
    attrs['gen_ai.output.messages'] !== undefined ||
    attrs['gen_ai.request.model'] !== undefined ||
    hasToolCallKeys(attrs)
  );
}

/** finish_reasons from the span, in the order of its answer messages. */
export function spanFinishReasons(attrs: Attributes): unknown[] {
  const v = jsonAttr(attrs['gen_ai.response.finish_reasons']);
  if (Array.isArray(v)) return v;
  // string[] by the registry; a single string (wrong type, or a raw value) is one choice's.
  if (typeof v === 'string') return [v];
  // The Anthropic SDK records only the raw stop reason.
  const raw = str(attrs['anthropic.message.stop_reason']);
  if (raw !== null) return [raw];
  // Semantic Kernel, singular: .NET the JSON of a list (["Stop"]), Python the choices' reasons
  // joined with commas (FinishReason.STOP,FinishReason.STOP), N/A when unknown.
  const sk = str(attrs['gen_ai.response.finish_reason']);
  if (sk === null) return [];
  const list = sk.startsWith('[') ? jsonAttr(sk) : sk.split(',');
  return Array.isArray(list) ? list.filter((r) => typeof r === 'string' && r !== '' && r !== 'N/A') : [];
}

/** A step's request and answer as read from one place; either may be missing. */
export type Exchange = { request?: Message[]; response?: Message[] };

/** Request and response messages from gen_ai.* message attributes (span or details log). */
export function genAiMessages(attrs: Attributes): Exchange {
  const out: Exchange = {};
  const input = genAiInput(attrs['gen_ai.input.messages']);
  const system = genAiSystem(attrs['gen_ai.system_instructions']);
  if (input !== undefined || system.length) out.request = [...system, ...(input ?? [])];
  const output = genAiOutput(attrs['gen_ai.output.messages'], spanFinishReasons(attrs));
  if (output !== undefined) out.response = output;
  return out;
}

/** A recorded message list, or null when content capture was off (nothing but roles and ids). */
export function recorded(messages: Message[] | undefined): JsonValue | null {
  return messages !== undefined && carriesContent(messages) ? (messages as unknown as JsonValue) : null;
}

export function llmModel(attrs: Attributes): string | null {
  return firstStr(attrs, ['gen_ai.response.model', 'gen_ai.request.model']);
}

/** The model the call asked for (the fingerprint's name: finish.ts). */
export function llmRequestModel(attrs: Attributes): string | null {
  return str(attrs['gen_ai.request.model']);
}

/** Google ADK: the whole Gemini request and response as JSON (gcp.vertex.agent.llm_request / llm_response). */
function adkMessages(attrs: Attributes): Exchange {
  const request = attrs['gcp.vertex.agent.llm_request'];
  const response = attrs['gcp.vertex.agent.llm_response'];
  return {
    request: request === undefined ? undefined : messagesFromRequestBody(jsonAttr(request)),
    response: response === undefined ? undefined : messagesFromResponseBody(jsonAttr(response)),
  };
}

/**
 * Logfire's OpenAI instrumentation before it wrote gen_ai.input/output.messages: the request
 * body in request_data, the answer in response_data (message; a streamed call's separate
 * `streaming response` span: combined_chunk_content).
 */
function logfireMessages(attrs: Attributes): Exchange {
  const request = asObject(jsonAttr(attrs['request_data']));
  const response = asObject(jsonAttr(attrs['response_data']));
  if (!request && !response) return {};
  const text = response?.combined_chunk_content;
  return {
    request: request ? messagesFromRequestBody(request) : undefined,
    response:
      response?.message !== undefined
        ? fromProviderMessage({ role: 'assistant', ...asObject(response.message) })
        : typeof text === 'string'
          ? fromProviderMessage({ role: 'assistant', content: text })
          : messagesFromResponseBody(response),
  };
}

/**
 * Logfire records a streamed OpenAI call twice: the call's span (request_data, no answer) and
 * a `streaming response` log span with the request and the whole answer. The second is the step.
 */
function isLogfireStreamStart(attrs: Attributes): boolean {
  return (
    attrs['response_data'] === undefined &&
    asObject(jsonAttr(attrs['request_data']))?.stream === true &&
    attrs['logfire.msg_template'] !== undefined
  );
}

function readLlm(span: SpanRecord, logs: readonly LogRecord[], draft: StepDraft): StepDraft | null {
  const attrs = span.attributes;
  let { request, response } = genAiMessages(attrs);
  if (request === undefined && response === undefined) ({ request, response } = adkMessages(attrs));
  if (request === undefined && response === undefined) {
    if (isLogfireStreamStart(attrs)) return null;
    ({ request, response } = logfireMessages(attrs));
  }
  // Instructions alone on the span are not the request: @opentelemetry/instrumentation-openai
  // (Responses API) records gen_ai.system_instructions there whatever the content setting and
  // the messages in log records, which repeat the instructions as a leading system message.
  const onlyInstructions = request !== undefined && attrs['gen_ai.input.messages'] === undefined;
  if (request === undefined || onlyInstructions || response === undefined) {
    const events = readEventContent(span, logs);
    if (events) {
      const details = events.details ? genAiMessages(events.details) : {};
      const logged = details.request ?? events.request;
      if ((request === undefined || onlyInstructions) && logged !== undefined) {
        request = onlyInstructions && logged[0]?.role !== 'system' ? [...(request ?? []), ...logged] : logged;
        draft.layout = 'otel-genai-events';
      }
      response ??= details.response ?? events.response;
    }
  }
  // An answer without a finish reason in the message takes the span's (one per choice).
  const reasons = spanFinishReasons(attrs);
  response?.forEach((m, i) => {
    if (m.finish_reason === undefined && m.role === 'assistant') {
      const f = canonicalFinishReason(reasons[i]);
      if (f !== undefined) m.finish_reason = f;
    }
  });
  draft.model = llmModel(attrs);
  draft.requestModel = llmRequestModel(attrs);
  draft.request = recorded(request);
  draft.response = recorded(response);
  return draft;
}

function readTool(span: SpanRecord, logs: readonly LogRecord[], draft: StepDraft): StepDraft {
  const attrs = span.attributes;
  draft.tool = firstStr(attrs, ['gen_ai.tool.name']) ?? span.name.replace(/^execute_tool\s+/, '');
  draft.name = span.name;
  draft.toolCallId = str(attrs['gen_ai.tool.call.id']);
  // pydantic-ai instrumentation versions 1 and 2 (`running tool` spans) write tool_arguments /
  // tool_response; Google ADK gcp.vertex.agent.tool_call_args / tool_response; autogen-core's
  // trace_tool_span (_telemetry/_genai.py), where it is given them, autogen.tool.arguments.
  const args =
    attrs['gen_ai.tool.call.arguments'] ??
    attrs['tool_arguments'] ??
    attrs['gcp.vertex.agent.tool_call_args'] ??
    attrs['autogen.tool.arguments'] ??
    codeParameters(attrs);
  const result =
    attrs['gen_ai.tool.call.result'] ??
    attrs['anthropic.tool_result.content'] ??
    attrs['tool_response'] ??
    attrs['gcp.vertex.agent.tool_response'] ??
    attrs['code.function.return.value'];
  const events = args === undefined || result === undefined ? readToolEvents(span, logsOfSpan(span, logs)) : {};
  if ((args === undefined && events.args !== undefined) || (result === undefined && events.result !== undefined))
    draft.layout = 'otel-genai-events';
  draft.request = orNull(canonicalValue(args !== undefined ? toJson(args) : events.args));
  draft.response = orNull(canonicalValue(result !== undefined ? toJson(result) : events.result));
  return draft;
}

/**
 * The OTel contrib google-genai instrumentation's tool spans record each argument as
 * code.function.parameters.<name>.value (and the result as code.function.return.value).
 */
function codeParameters(attrs: Attributes): AttributeValue | undefined {
  const prefix = 'code.function.parameters.';
  let args: { [k: string]: AttributeValue } | undefined;
  for (const key in attrs) {
    if (!key.startsWith(prefix) || !key.endsWith('.value')) continue;
    args ??= {};
    args[key.slice(prefix.length, -'.value'.length)] = attrs[key];
  }
  return args;
}

function readAgent(span: SpanRecord, logs: readonly LogRecord[], draft: StepDraft): StepDraft {
  const attrs = span.attributes;
  const pydantic = isPydanticAgentRun(span);
  draft.name =
    firstStr(attrs, pydantic ? ['gen_ai.agent.name', 'agent_name'] : ['gen_ai.agent.name']) ??
    (span.name.replace(/^invoke_agent\s*/, '') || span.name);
  draft.model = llmModel(attrs) ?? (pydantic ? str(attrs['model_name']) : null);
  let { request, response } = pydantic ? pydanticAgentRun(attrs) : mastraAgentRun(attrs);
  if (request === undefined && response === undefined) ({ request, response } = genAiMessages(attrs));
  if (request === undefined && response === undefined) {
    // Strands Agents records the agent's input and answer as events on its invoke_agent span.
    const events = readEventContent(span, logsOfSpan(span, logs));
    if (events?.request !== undefined || events?.response !== undefined) draft.layout = 'otel-genai-events';
    ({ request, response } = events ?? {});
  }
  draft.request = recorded(request);
  draft.response = recorded(response);
  return draft;
}

/**
 * A pydantic-ai agent run's request and answer: pydantic_ai.all_messages is the whole
 * conversation (earlier turns, this turn's prompt, then its model calls and tool results, as
 * OTel GenAI messages) and final_result the output. The agent was asked everything up to the
 * last user message (after the instructions, as a model call's request has them); it answered
 * with the last message when that is the assistant's, else with final_result (text, or JSON
 * text of a structured output).
 */
function pydanticAgentRun(attrs: Attributes): Exchange {
  const all = genAiInput(attrs['pydantic_ai.all_messages']);
  const finalResult = canonicalValue(toJson(attrs['final_result']));
  if (all === undefined && finalResult === undefined) return {};
  const messages = all ?? [];
  let prompt = -1;
  for (let i = 0; i < messages.length; i++) if (messages[i].role === 'user') prompt = i;
  const out: Exchange = {};
  const request = [...genAiSystem(attrs['gen_ai.system_instructions']), ...messages.slice(0, prompt + 1)];
  if (request.length > 0) out.request = request;
  const last = messages.at(-1);
  if (last !== undefined && last.role === 'assistant' && prompt < messages.length - 1) out.response = [last];
  else if (finalResult !== undefined) out.response = [{ role: 'assistant', content: finalResult }];
  return out;
}

/**
 * Mastra's agent run span (@mastra/otel-exporter: invoke_agent): the run's input in
 * mastra.agent_run.input (its messages, or the text), its answer in mastra.agent_run.output
 * ({text, files, ...}, or the text), the instructions in gen_ai.system_instructions.
 */
function mastraAgentRun(attrs: Attributes): Exchange {
  const input = jsonAttr(attrs['mastra.agent_run.input']);
  const output = jsonAttr(attrs['mastra.agent_run.output']);
  if (input === undefined && output === undefined) return {};
  const out: Exchange = {};
  const asked = Array.isArray(input)
    ? fromProviderMessages(input)
    : typeof input === 'string'
      ? fromProviderMessage({ role: 'user', content: input })
      : [];
  const request = [...genAiSystem(attrs['gen_ai.system_instructions']), ...asked];
  if (request.length > 0) out.request = request;
  const text = typeof output === 'string' ? output : asObject(output)?.text;
  if (typeof text === 'string' && text !== '') out.response = fromProviderMessage({ role: 'assistant', content: text });
  return out;
}

export const otelGenAi: Dialect = {
  name: 'otel-genai',
  matches(span, logs) {
    if (hasGenAiKeys(span.attributes) || isPydanticAgentRun(span)) return true;
    if (span.events.some((e) => isGenAiEventName(e.name))) return true;
    return logs.some((l) => l.spanId === span.spanId && isGenAiEventName(logEventName(l)));
  },
  read(span, logs) {
    const attrs = span.attributes;
    let kind = kindOfOperation(operationOf(span));
    // No operation named anywhere: tool-call keys make a tool execution; a request model or
    // messages, a model call.
    if (kind === undefined) kind = hasToolCallKeys(attrs) ? 'tool' : 'llm';
    if (kind === null) return null;
    const draft = emptyDraft(span, kind, span.name, 'otel-genai');
    draft.tokens = genAiTokens(attrs);
    draft.params = genAiParams(attrs);
    draft.costUsd = reportedCost(attrs);
    if (kind === 'llm') return readLlm(span, logsOfSpan(span, logs), draft);
    if (kind === 'tool') return readTool(span, logs, draft);
    return readAgent(span, logs, draft);
  },
};
