/**
 * @module normalize/dialects/langfuse
 * Langfuse's OpenTelemetry-based SDKs (Python v3, JS v4) write their own keys: the observation's
 * type in langfuse.observation.type (generation → a model call, tool, agent; span, event,
 * chain, retriever, embedding, evaluator, guardrail are context), its input and output as JSON
 * text in langfuse.observation.input / output (whatever the caller passed: a message list, a
 * provider request or response, text, any value), the model in langfuse.observation.model.name,
 * its parameters and usage as JSON (model.parameters, usage_details). Tried last: a span that
 * also carries another layout's keys is read by that layout.
 */
import type { Attributes, SpanRecord } from '../../spans/span-record.js';
import type { Message, StepDraft, StepKind } from '../step.js';
import type { JsonValue } from '../../json/json-value.js';
import { asObject, jsonAttr, str } from '../attrs.js';
import { canonicalValue } from '../messages.js';
import {
  fromProviderMessage,
  fromProviderMessages,
  messagesFromRequestBody,
  messagesFromResponseBody,
} from '../provider-messages.js';
import { makeTokens } from '../usage.js';
import { recorded } from './otel-genai.js';
import { emptyDraft, orNull, type Dialect } from './types.js';

const KINDS: Record<string, StepKind> = { generation: 'llm', tool: 'tool', agent: 'agent' };

/** A generation's input: messages, a provider request, or the prompt text. */
function requestOf(v: JsonValue | undefined): Message[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return fromProviderMessage({ role: 'user', content: v });
  return (
    messagesFromRequestBody(v) ??
    (asObject(v) && Array.isArray(asObject(v)!.messages) ? fromProviderMessages(asObject(v)!.messages) : undefined)
  );
}

/** A generation's output: a provider response, the answer message(s), or its text. */
function responseOf(v: JsonValue | undefined): Message[] | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'string') return fromProviderMessage({ role: 'assistant', content: v });
  if (Array.isArray(v)) return fromProviderMessages(v);
  const o = asObject(v);
  if (o && typeof o.role === 'string') return fromProviderMessage(o);
  return messagesFromResponseBody(v);
}

function usageOf(attrs: Attributes): StepDraft['tokens'] {
  const u = asObject(jsonAttr(attrs['langfuse.observation.usage_details'])) ?? {};
  const n = (...keys: string[]): number | null => {
    for (const k of keys) if (typeof u[k] === 'number') return u[k] as number;
    return null;
  };
  return makeTokens(
    n('input', 'prompt_tokens', 'input_tokens'),
    n('output', 'completion_tokens', 'output_tokens'),
    n('input_cache_read', 'cache_read'),
    n('input_cache_creation', 'cache_write'),
  );
}

export const langfuse: Dialect = {
  name: 'langfuse',
  matches(span) {
    return span.attributes['langfuse.observation.type'] !== undefined;
  },
  read(span: SpanRecord) {
    const attrs = span.attributes;
    const kind = KINDS[str(attrs['langfuse.observation.type']) ?? ''];
    if (!kind) return null;
    const draft = emptyDraft(span, kind, span.name, 'langfuse');
    const input = jsonAttr(attrs['langfuse.observation.input']);
    const output = jsonAttr(attrs['langfuse.observation.output']);
    if (kind === 'llm') {
      draft.request = recorded(requestOf(input));
      draft.response = recorded(responseOf(output));
      draft.model = str(attrs['langfuse.observation.model.name']);
      draft.tokens = usageOf(attrs);
      const params = asObject(jsonAttr(attrs['langfuse.observation.model.parameters']));
      if (params) draft.params = params;
      return draft;
    }
    if (kind === 'tool') draft.tool = span.name;
    draft.request = orNull(canonicalValue(input));
    draft.response = orNull(canonicalValue(output));
    return draft;
  },
};
