/**
 * @module normalize/dialects/mastra-legacy
 * Mastra's built-in OpenTelemetry telemetry from before its AI-tracing rewrite
 * (@mastra/otel-exporter's invoke_agent spans are read in otel-genai.ts). Its decorators
 * (@mastra/core telemetry.decorators.ts withSpan / InstrumentClass, Telemetry.traceMethod)
 * name a span after the traced method and record every argument as the JSON string
 * `{span name}.argument.{i}` and the return value as `{span name}.result`; no GenAI keys.
 * - Agent: the Agent class is instrumented with prefix `agent`, so agent.generate /
 *   agent.stream (and the Legacy / VNext variants): argument.0 is the input (a string, strings
 *   or AI SDK messages), the result the run's output ({text, ...}; a stream's onFinish data).
 * - Tool: Mastra's first releases traced tool executors as `tool.{key}` with toolName = key.
 * Known by the span name together with the decorator's own keys, so another framework's span
 * merely named agent.run or tool.x is not taken for Mastra's. Its steps are in the OTel GenAI
 * layout's family (layout `otel-genai`): Mastra's later exporter writes that layout.
 */
import type { AttributeValue, SpanRecord } from '../../spans/span-record.js';
import type { Message, StepDraft } from '../step.js';
import type { JsonValue } from '../../json/json-value.js';
import { asObject, jsonAttr, str, toJson } from '../attrs.js';
import { canonicalValue } from '../messages.js';
import { fromProviderMessage, fromProviderMessages } from '../provider-messages.js';
import { emptyDraft, orNull, type Dialect } from './types.js';

/** The Agent methods that are a run; agent.getMemory, agent.{name}.inputProcessors … are context. */
const AGENT_RUNS = new Set(['generate', 'stream', 'generateLegacy', 'streamLegacy', 'generateVNext', 'streamVNext']);

function recordedCall(span: SpanRecord): boolean {
  const a = span.attributes;
  return a[`${span.name}.argument.0`] !== undefined || a[`${span.name}.result`] !== undefined;
}

function agentRun(span: SpanRecord): boolean {
  return span.name.startsWith('agent.') && AGENT_RUNS.has(span.name.slice('agent.'.length)) && recordedCall(span);
}

function toolKey(span: SpanRecord): string | null {
  const key = str(span.attributes['toolName']);
  return key !== null && span.name === `tool.${key}` && recordedCall(span) ? key : null;
}

function isMastraLegacySpan(span: SpanRecord): boolean {
  return agentRun(span) || toolKey(span) !== null;
}

/** The agent's input: a string is the user's text, strings several user texts, else messages. */
function asked(v: AttributeValue | undefined): Message[] {
  const input = jsonAttr(v);
  const user = (text: unknown) =>
    typeof text === 'string' ? fromProviderMessage({ role: 'user', content: text }) : [];
  if (typeof input === 'string') return user(input);
  if (!Array.isArray(input)) return [];
  return input.every((m) => typeof m === 'string') ? input.flatMap(user) : fromProviderMessages(input);
}

/** The run's output text ({text, ...}); a structured output's object as its JSON text. */
function answered(v: AttributeValue | undefined): Message[] {
  const out = asObject(jsonAttr(v));
  const text =
    typeof out?.text === 'string' && out.text !== ''
      ? out.text
      : out?.object !== undefined && out.object !== null
        ? JSON.stringify(out.object)
        : null;
  return text === null ? [] : fromProviderMessage({ role: 'assistant', content: text });
}

function readMastraLegacy(span: SpanRecord): StepDraft | null {
  const attrs = span.attributes;
  const key = toolKey(span);
  if (key !== null) {
    const draft = emptyDraft(span, 'tool', span.name, 'otel-genai');
    draft.tool = key;
    draft.request = orNull(canonicalValue(toJson(attrs[`${span.name}.argument.0`])));
    draft.response = orNull(canonicalValue(toJson(attrs[`${span.name}.result`])));
    return draft;
  }
  if (!agentRun(span)) return null;
  // componentName is the agent's name (the decorator copies `this.name`).
  const draft = emptyDraft(span, 'agent', str(attrs['componentName']) ?? span.name, 'otel-genai');
  const request = asked(attrs[`${span.name}.argument.0`]);
  const response = answered(attrs[`${span.name}.result`]);
  draft.request = request.length ? (request as unknown as JsonValue) : null;
  draft.response = response.length ? (response as unknown as JsonValue) : null;
  return draft;
}

export const mastraLegacy: Dialect = { name: 'otel-genai', matches: isMastraLegacySpan, read: readMastraLegacy };
