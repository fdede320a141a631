/**
 * @module normalize/normalize
 * normalizeSpan: one SpanRecord (and the log records correlated to it) in, SpanFacts out —
 * the run the span names, and the step it is (or null when it is context). Pure: no I/O,
 * clock or environment. Digests come later (finish.ts), because they describe the stored
 * form after offload.
 *
 * Log records may arrive in a later export than their span (the OTel logs and traces
 * pipelines are separate): a span normalized before its logs arrived reads as content not
 * recorded, and normalizing it again with its logs gives the full step.
 */
import type { LogRecord, SpanRecord } from '../spans/span-record.js';
import type { SpanFacts, StepDraft } from './step.js';
import { DIALECTS, type Dialect } from './dialects/index.js';
import { ownRunOf, parentRunOf } from './run-identity.js';

/**
 * Bumped whenever the same span would normalize differently (new dialect rules, a changed
 * canonical shape), so stored steps can be recognized as stale and reindexed from spans.
 * 2: layout variants beyond the corpus (output messages without a role, span-event bodies,
 *    Traceloop spans by llm.request.type, operation from the span name, OpenInference body vs
 *    flattened keys, ai.response.object, bigint/bytes values).
 * 3: Bedrock Converse content blocks in OpenInference bodies; AI SDK image/file parts (and
 *    OpenAI file parts) keep their data; AI SDK spans known by operation.name or span name, and
 *    their rewritten outer call span stays context; pydantic-ai `events` and tool_arguments /
 *    tool_response; Traceloop LangChain entity wrappers.
 * 4: Strands Agents span events (Converse blocks as JSON text, tool and agent events); Gemini
 *    contents and candidates (google-genai bodies, Google ADK's gcp.vertex.agent.* keys);
 *    upper-case finish reasons (Gemini's STOP, MAX_TOKENS, SAFETY) mapped like lower-case ones.
 * 5: instrumentations read from their sources (instrumentation-variants.test.ts names each):
 *    - OTel GenAI: pydantic-ai agent runs; Strands JSON-text answers; Semantic Kernel's
 *      operations, finish reasons and text-only event bodies; LiteLLM's call types and its
 *      tool_calls / tool_call_id on messages; Logfire's request_data / response_data; Mastra;
 *      contrib google-genai / vertexai events and tool spans; contrib openai-agents' parts; a
 *      built-in tool's call beside its response (contrib OpenAI Responses); function_call
 *      parts; messages with a content list and no parts.
 *    - OpenLLMetry: openai-agents tool spans; thinking, refusal and reasoning-summary
 *      completions; LangChain's '""' text, `unknown` role and JS tool tasks; tool_use blocks
 *      counted once; its event mode; role-named prompt keys; Converse blocks under Bedrock;
 *      MCP tool spans; the AI SDK transform's agent spans and JSON-text tool parts.
 *    - OpenInference: OpenAI Responses API bodies (responses-items.ts); CrewAI, LlamaIndex,
 *      Agno, BeeAI, smolagents, AutoGen, Haystack, Bedrock Agents, google-genai repr bodies,
 *      LangChain JS tools; bodies preferred when they say as much as the flattened keys.
 *    - AI SDK 5+ reasoning; Langfuse's SDKs (a dialect of their own, layout `langfuse`).
 * 6: Mastra's telemetry from before its AI tracing (agent.generate / agent.stream runs and
 *    tool.{key} spans: mastra-legacy.ts), which were context.
 * 7: OpenInference openai-agents handoff spans and trace root are context (they were a tool and
 *    an agent step); DSPy LM output objects in output.value; autogen.tool.arguments; contrib
 *    vertexai's made-up call ids on the history's calls (framework-span-gaps.test.ts); an
 *    OpenInference LangChain step's model is the one that answered (its result's
 *    response_metadata), no longer the one asked for (llm.model_name).
 */
export const NORMALIZER_VERSION = 7;

const NO_LOGS: readonly LogRecord[] = Object.freeze([]);

/** A dialect threw on a span (kept with no step); `layout` names the dialect. */
export type DialectErrorHandler = (error: unknown, layout: string) => void;

export function normalizeSpan(
  span: SpanRecord,
  logs: readonly LogRecord[] = NO_LOGS,
  dialects: readonly Dialect[] = DIALECTS,
  onDialectError?: DialectErrorHandler,
): SpanFacts {
  return { ...runFactsOf(span), step: stepOf(span, logs, dialects, onDialectError) };
}

/**
 * What the span itself says about its run: the run it names and an explicitly named parent
 * run. Read from its attributes alone, so a writer can have them without the span's step.
 */
export function runFactsOf(span: SpanRecord): Pick<SpanFacts, 'ownRun' | 'parentRun'> {
  return { ownRun: ownRunOf(span.attributes), parentRun: parentRunOf(span.attributes) };
}

/**
 * The first matching dialect's step. Dialects read untrusted attribute values; should one
 * still throw on a shape nobody foresaw, the span is kept as a span with no step (like a span
 * no dialect understands) rather than failing the whole export it arrived in.
 */
function stepOf(
  span: SpanRecord,
  logs: readonly LogRecord[],
  dialects: readonly Dialect[],
  onDialectError?: DialectErrorHandler,
): StepDraft | null {
  let dialect: Dialect | undefined;
  try {
    for (dialect of dialects) {
      if (dialect.matches(span, logs)) return dialect.read(span, logs);
    }
  } catch (error) {
    // Said, not swallowed: the step is missing until a fixed normalizer's reindex derives it.
    onDialectError?.(error, dialect?.name ?? 'unknown');
    return null;
  }
  return null;
}
