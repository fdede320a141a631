/**
 * @module normalize/dialects/vercel-ai
 * The Vercel AI SDK's legacy `ai.*` layout (≤ v6 by default; `LegacyOpenTelemetry` in v7),
 * kept minimal: one provider call (`ai.*.doGenerate` / `ai.*.doStream`, generateText / streamText /
 * generateObject / streamObject alike; `ai.embed*.doEmbed` is context) is a model step,
 * `ai.toolCall` is a tool step. The outer `ai.generateText` / `ai.streamText` span repeats
 * its children's text and usage totals, so it is context, not a step (no double counting).
 * AI SDK 7's default integration emits OTel GenAI spans, read by the otel-genai dialect.
 */
import type { Attributes, SpanRecord } from '../../spans/span-record.js';
import type { Message } from '../step.js';
import { firstNum, firstStr, jsonAttr, str, toJson } from '../attrs.js';
import { canonicalValue, makeMessage } from '../messages.js';
import { fromProviderMessages, providerToolCall } from '../provider-messages.js';
import { genAiParams, makeTokens, reportedCost } from '../usage.js';
import { genAiMessages, recorded } from './otel-genai.js';
import { emptyDraft, orNull, type Dialect } from './types.js';

/** The SDK's span names, which are also its operation ids (telemetry docs). */
const OPERATION_NAME =
  /^ai\.(generateText|streamText|generateObject|streamObject|embed|embedMany|toolCall)(\.(doGenerate|doStream|doEmbed))?$/;

/**
 * The AI SDK operation a span records, or null when it is not an AI SDK span: ai.operationId;
 * else, for early SDKs that set only `operation.name` ("ai.generateText <functionId>"), its
 * first word; else the span name when it is one of the SDK's operation names.
 */
export function aiSdkOperation(span: SpanRecord): string | null {
  const attrs = span.attributes;
  const id = str(attrs['ai.operationId']);
  if (id !== null) return id;
  const opName = str(attrs['operation.name'])?.split(' ', 1)[0];
  if (opName !== undefined && OPERATION_NAME.test(opName)) return opName;
  return OPERATION_NAME.test(span.name) ? span.name : null;
}

/** A model call (one provider call); the generateText / streamText / … span around them is not. */
export function isAiSdkModelCall(op: string): boolean {
  return /\.do(Generate|Stream)$/.test(op);
}

function answer(attrs: Attributes): Message[] | undefined {
  // generateObject / streamObject record the generated object (stringified JSON) in
  // ai.response.object instead of ai.response.text (AI SDK telemetry docs).
  const text = toJson(attrs['ai.response.text'] ?? attrs['ai.response.object']);
  const calls = jsonAttr(attrs['ai.response.toolCalls']);
  // AI SDK 5+: the reasoning texts, joined, beside the answer's text
  const reasoning = str(attrs['ai.response.reasoning']);
  if (text === undefined && calls === undefined && reasoning === null) return undefined;
  const content =
    reasoning === null || reasoning === ''
      ? text
      : [
          { type: 'reasoning', text: reasoning },
          ...(typeof text === 'string' && text !== '' ? [{ type: 'text', text }] : []),
        ];
  return [
    makeMessage({
      role: 'assistant',
      content,
      toolCalls: Array.isArray(calls) ? calls.map(providerToolCall) : [],
      finishReason: str(attrs['ai.response.finishReason']),
    }),
  ];
}

export const vercelAi: Dialect = {
  name: 'vercel-ai',
  // The operation, not the scope: AI SDK 7's default integration shares the `ai` scope but
  // emits OTel GenAI spans, which the otel-genai dialect must get.
  matches(span) {
    return aiSdkOperation(span) !== null;
  },
  read(span) {
    const attrs = span.attributes;
    const op = aiSdkOperation(span) ?? span.name;
    if (isAiSdkModelCall(op)) {
      const draft = emptyDraft(span, 'llm', span.name, 'vercel-ai');
      const prompt = jsonAttr(attrs['ai.prompt.messages']);
      // The Traceloop SDK's span processor rewrites these spans in place: it moves the prompt
      // and answer into gen_ai.input.messages / gen_ai.output.messages and deletes the ai.*
      // content keys, but leaves ai.operationId (TL-JS ai-sdk-transformations.ts).
      const rewritten = genAiMessages(attrs);
      draft.request = recorded(Array.isArray(prompt) ? fromProviderMessages(prompt) : rewritten.request);
      draft.response = recorded(answer(attrs) ?? rewritten.response);
      draft.model = firstStr(attrs, [
        'ai.response.model',
        'gen_ai.response.model',
        'ai.model.id',
        'gen_ai.request.model',
      ]);
      draft.requestModel = firstStr(attrs, ['gen_ai.request.model', 'ai.model.id']);
      draft.tokens = makeTokens(
        firstNum(attrs, ['gen_ai.usage.input_tokens', 'ai.usage.inputTokens', 'ai.usage.promptTokens']),
        firstNum(attrs, ['gen_ai.usage.output_tokens', 'ai.usage.outputTokens', 'ai.usage.completionTokens']),
        firstNum(attrs, ['ai.usage.cachedInputTokens', 'gen_ai.usage.cache_read.input_tokens']),
        null,
      );
      draft.params = genAiParams(attrs);
      draft.costUsd = reportedCost(attrs);
      return draft;
    }
    if (op === 'ai.toolCall') {
      const draft = emptyDraft(span, 'tool', span.name, 'vercel-ai');
      draft.tool = firstStr(attrs, ['ai.toolCall.name', 'gen_ai.tool.name']) ?? span.name;
      // The Traceloop transform moves the id to gen_ai.tool.call.id (and, when it also marks the
      // span traceloop.span.kind=tool, the openllmetry dialect reads it instead of this one).
      draft.toolCallId = firstStr(attrs, ['ai.toolCall.id', 'gen_ai.tool.call.id']);
      // v5-era builds wrote input/output; the Traceloop transform prefers those too.
      // Older Traceloop transforms move args/result to traceloop.entity.input/output without
      // marking the span a Traceloop tool span.
      draft.request = orNull(
        canonicalValue(
          toJson(
            attrs['ai.toolCall.input'] ??
              attrs['ai.toolCall.args'] ??
              attrs['gen_ai.tool.call.arguments'] ??
              attrs['traceloop.entity.input'],
          ),
        ),
      );
      draft.response = orNull(
        canonicalValue(
          toJson(
            attrs['ai.toolCall.output'] ??
              attrs['ai.toolCall.result'] ??
              attrs['gen_ai.tool.call.result'] ??
              attrs['traceloop.entity.output'],
          ),
        ),
      );
      return draft;
    }
    return null;
  },
};
