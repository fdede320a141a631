/**
 * @module normalize/dialects/vercel-ai
 * The Vercel AI SDK's legacy `ai.*` layout (≤ v6 by default; `LegacyOpenTelemetry` in v7),
 * kept minimal: one provider call (`ai.*.doGenerate` / `ai.*.doStream`, generateText / streamText /
 * generateObject / streamObject alike; `ai.embed*.doEmbed` is context) is a model step,
 * `ai.toolCall` is a tool step. The outer `ai.generateText` / `ai.streamText` span repeats
 * its children's text and usage totals, so it is context, not a step (no double counting).
 * AI SDK 7's default integration emits OTel GenAI spans, read by the otel-genai dialect.
 */
import type { Attributes } from '../../spans/span-record.js';
import type { Message } from '../step.js';
import { firstNum, firstStr, jsonAttr, str, toJson } from '../attrs.js';
import { canonicalValue, makeMessage } from '../messages.js';
import { fromProviderMessages, providerToolCall } from '../provider-messages.js';
import { genAiParams, makeTokens, reportedCost } from '../usage.js';
import { genAiMessages, recorded } from './otel-genai.js';
import { emptyDraft, orNull, type Dialect } from './types.js';

function answer(attrs: Attributes): Message[] | undefined {
  // generateObject / streamObject record the generated object (stringified JSON) in
  // ai.response.object instead of ai.response.text (AI SDK telemetry docs).
  const text = toJson(attrs['ai.response.text'] ?? attrs['ai.response.object']);
  const calls = jsonAttr(attrs['ai.response.toolCalls']);
  if (text === undefined && calls === undefined) return undefined;
  return [makeMessage({
    role: 'assistant',
    content: text,
    toolCalls: Array.isArray(calls) ? calls.map(providerToolCall) : [],
    finishReason: str(attrs['ai.response.finishReason']),
  })];
}

export const vercelAi: Dialect = {
  name: 'vercel-ai',
  // ai.operationId only: AI SDK 7's default integration shares the `ai` scope but emits
  // OTel GenAI spans, which the otel-genai dialect must get.
  matches(span) {
    return span.attributes['ai.operationId'] !== undefined;
  },
  read(span) {
    const attrs = span.attributes;
    const op = str(attrs['ai.operationId']) ?? span.name;
    if (/\.do(Generate|Stream)$/.test(op)) {
      const draft = emptyDraft(span, 'llm', span.name, 'vercel-ai');
      const prompt = jsonAttr(attrs['ai.prompt.messages']);
      // The Traceloop SDK's span processor rewrites these spans in place: it moves the prompt
      // and answer into gen_ai.input.messages / gen_ai.output.messages and deletes the ai.*
      // content keys, but leaves ai.operationId (TL-JS ai-sdk-transformations.ts).
      const rewritten = genAiMessages(attrs);
      draft.request = recorded(Array.isArray(prompt) ? fromProviderMessages(prompt) : rewritten.request);
      draft.response = recorded(answer(attrs) ?? rewritten.response);
      draft.model = firstStr(attrs, ['ai.response.model', 'gen_ai.response.model', 'ai.model.id', 'gen_ai.request.model']);
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
      draft.request = orNull(canonicalValue(toJson(attrs['ai.toolCall.input'] ?? attrs['ai.toolCall.args'] ?? attrs['gen_ai.tool.call.arguments'])));
      draft.response = orNull(canonicalValue(toJson(attrs['ai.toolCall.output'] ?? attrs['ai.toolCall.result'] ?? attrs['gen_ai.tool.call.result'])));
      return draft;
    }
    return null;
  },
};
