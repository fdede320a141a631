/**
 * @module normalize/usage
 * Tokens, configuration parameters and reported cost, read the same way for every layout.
 *
 * Tokens follow the OTel GenAI convention: `input` includes cached tokens (reads and
 * writes), `cache_read` / `cache_write` are the parts of it served from or written to a
 * prompt cache, `output` includes reasoning. `context` is the size of the prompt the model
 * saw (input with cache included): the same figure as `input` once every layout is folded
 * to the convention, kept apart so readers need not know which layouts excluded the cache.
 * A count the span did not report is null, never 0 (docs/architecture.md, invariant 5).
 */
import type { Attributes } from '../spans/span-record.js';
import type { Tokens } from './step.js';
import type { JsonValue } from '../json/json-value.js';
import { firstNum, toJson } from './attrs.js';
import { isResponse } from './responses-items.js';

export const NO_TOKENS: Tokens = Object.freeze({
  input: null,
  output: null,
  cache_read: null,
  cache_write: null,
  context: null,
});

export function makeTokens(
  input: number | null,
  output: number | null,
  cacheRead: number | null,
  cacheWrite: number | null,
): Tokens {
  return { input, output, cache_read: cacheRead, cache_write: cacheWrite, context: input };
}

/**
 * GenAI usage keys, current and deprecated. `inputExcludesCache` is for instrumentations
 * that put the provider's raw Anthropic `input_tokens` (cache excluded) in
 * gen_ai.usage.input_tokens and report the cache separately (Traceloop JS 0.27): the cache
 * counts are added back so the figure means what it means everywhere else.
 */
export function genAiTokens(attrs: Attributes, inputExcludesCache = false): Tokens {
  let input = firstNum(attrs, ['gen_ai.usage.input_tokens', 'gen_ai.usage.prompt_tokens']);
  const output = firstNum(attrs, ['gen_ai.usage.output_tokens', 'gen_ai.usage.completion_tokens']);
  const cacheRead = firstNum(attrs, ['gen_ai.usage.cache_read.input_tokens', 'gen_ai.usage.cache_read_input_tokens']);
  const cacheWrite = firstNum(attrs, [
    'gen_ai.usage.cache_creation.input_tokens',
    'gen_ai.usage.cache_write.input_tokens', // the Anthropic SDK's built-in spans
    'gen_ai.usage.cache_creation_input_tokens',
  ]);
  if (inputExcludesCache && input !== null) input += (cacheRead ?? 0) + (cacheWrite ?? 0);
  return makeTokens(input, output, cacheRead, cacheWrite);
}

const REQUEST_PREFIX = 'gen_ai.request.';

/** gen_ai.request.* → params with the prefix dropped (gen_ai.request.max_tokens → max_tokens). */
export function genAiParams(attrs: Attributes): { [k: string]: JsonValue } {
  const params: { [k: string]: JsonValue } = {};
  for (const key in attrs) {
    if (!key.startsWith(REQUEST_PREFIX)) continue;
    const v = toJson(attrs[key]);
    if (v !== undefined && v !== null && v !== '') params[key.slice(REQUEST_PREFIX.length)] = v;
  }
  return params;
}

/** Request-body keys that are content or tool schemas, not configuration. */
const NOT_PARAMS = new Set(['messages', 'system', 'tools', 'functions', 'input', 'instructions', 'prompt', 'contents']);
/**
 * What a Responses API Response holds beside the request's settings: openai-agents'
 * instrumentation records the whole Response (minus tools, usage, output) as its parameters.
 */
const RESPONSE_FIELDS = new Set([
  'id',
  'object',
  'created_at',
  'status',
  'error',
  'incomplete_details',
  'output',
  'output_text',
  'usage',
]);
/**
 * LlamaIndex's LLMMetadata, which openinference-instrumentation-llama-index records as
 * llm.invocation_parameters: what the model is (its context window, whether it chats), not
 * how it was asked. Left out where the value has its shape (context_window and is_chat_model).
 */
const LLM_METADATA = new Set([
  'context_window',
  'num_output',
  'is_chat_model',
  'is_function_calling_model',
  'system_role',
  'model_name',
]);

/**
 * Provider request parameters (OpenInference llm.invocation_parameters) → the names the
 * GenAI registry uses, so one call's params read alike across layouts:
 * max_completion_tokens → max_tokens (as @opentelemetry/instrumentation-openai records it),
 * stop → stop_sequences, n → choice.count.
 */
export function providerParams(body: JsonValue | undefined): { [k: string]: JsonValue } {
  const params: { [k: string]: JsonValue } = {};
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return params;
  const metadata = 'context_window' in body && 'is_chat_model' in body;
  const response = isResponse(body);
  for (const [k, v] of Object.entries(body)) {
    if (
      NOT_PARAMS.has(k) ||
      v === null ||
      v === undefined ||
      (metadata && LLM_METADATA.has(k)) ||
      (response && RESPONSE_FIELDS.has(k))
    )
      continue;
    if (k === 'max_completion_tokens') {
      if (!('max_tokens' in body)) params.max_tokens = v;
      continue;
    }
    if (k === 'stop') {
      params.stop_sequences = typeof v === 'string' ? [v] : v;
      continue;
    }
    if (k === 'n') {
      params['choice.count'] = v;
      continue;
    }
    params[k] = v;
  }
  return params;
}

/** A metered cost the span itself reported, in USD (OpenInference llm.cost.total, Langfuse-style keys). */
export function reportedCost(attrs: Attributes): number | null {
  return firstNum(attrs, ['llm.cost.total', 'gen_ai.usage.cost', 'gen_ai.usage.cost_usd']);
}
