/**
 * @module normalize/dialects
 * The ordered dialect registry. Decided per span (one trace often mixes families), first
 * match wins, in the order of the reference's detection table (genai-layouts.md):
 * 1. OpenInference: openinference.span.kind is unambiguous.
 * 2. OpenLLMetry: traceloop.span.kind, a Traceloop scope, llm.request.type or indexed gen_ai.prompt.{i} keys —
 *    before OTel GenAI, because Traceloop ≥ 0.27 spans also carry gen_ai.input.messages.
 * 3. Vercel AI SDK legacy: ai.operationId.
 * 4. Mastra's telemetry from before its AI tracing (mastra-legacy.ts): spans named after the
 *    traced method with `{name}.argument.0` / `{name}.result`, no GenAI keys (its steps' layout: `otel-genai`).
 * 5. OTel GenAI: gen_ai.operation.name / message attributes / correlated gen_ai events;
 *    also the Anthropic SDK's built-in spans, which only Traceloop's stamped keys could
 *    otherwise confuse (hence Traceloop is tested on span kind and scope, not key prefix).
 * 6. Langfuse's SDKs: langfuse.observation.type, for spans that carry no other layout's keys.
 */
import type { Dialect } from './types.js';
import { openinference } from './openinference.js';
import { openllmetry } from './openllmetry.js';
import { vercelAi } from './vercel-ai.js';
import { mastraLegacy } from './mastra-legacy.js';
import { otelGenAi } from './otel-genai.js';
import { langfuse } from './langfuse.js';

export type { Dialect } from './types.js';

export const DIALECTS: readonly Dialect[] = Object.freeze([
  openinference,
  openllmetry,
  vercelAi,
  mastraLegacy,
  otelGenAi,
  langfuse,
]);
