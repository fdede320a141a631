/**
 * @module normalize/step
 * The canonical step model: what every layout folds into (docs/architecture.md "Steps").
 */

import type { JsonValue } from '../json/json-value.js';

export type StepKind = 'llm' | 'tool' | 'agent';

export interface ToolCall {
  id?: string;
  name: string;
  arguments?: JsonValue;
}

/** One message, whichever layout or provider it came from. Keys that carry nothing are absent. */
export interface Message {
  /** one of the four canonical roles, or a role no alias maps, as recorded */
  role: 'system' | 'user' | 'assistant' | 'tool' | (string & {});
  content?: JsonValue;
  tool_call_id?: string;
  /** on tool results the tool reported as failed; absent otherwise */
  is_error?: true;
  tool_calls?: ToolCall[];
  finish_reason?: string;
}

/** A reference to a value moved to the payload store. */
export interface PayloadRef {
  $payload: string; // "sha256/<64 hex>"
}

export interface Tokens {
  input: number | null;
  output: number | null;
  cache_read: number | null;
  cache_write: number | null;
  context: number | null;
}

export type StepStatus = 'ok' | 'error' | 'unset';

/** Layout a step was read from. */
export type LayoutName =
  | 'otel-genai'
  | 'otel-genai-events'
  | 'openllmetry'
  | 'openinference'
  | 'vercel-ai'
  | 'langfuse';

/**
 * What the normalizer derives from one span (and the log records correlated to it).
 * Pure data: no digests yet (finish.ts, payloads/offload.ts compute them).
 */
export interface StepDraft {
  kind: StepKind;
  name: string;
  /** llm steps: the response model when recorded, else the request model (what a tape shows) */
  model: string | null;
  /**
   * llm steps: the model the call asked for, when the layout recorded it. The fingerprint is
   * named by it (finish.ts), since every layout records it while some record no response model.
   */
  requestModel?: string | null;
  tool: string | null;
  status: StepStatus;
  /** llm: Message[]; tool: the arguments; agent: its input. null when content was not recorded. */
  request: JsonValue | null;
  /** llm: Message[]; tool: the result; agent: its output. null when not recorded. */
  response: JsonValue | null;
  tokens: Tokens;
  /** gen_ai.request.* / llm.invocation_parameters configuration, keys without prefix */
  params: { [key: string]: JsonValue };
  layout: LayoutName;
  /** cost the span itself reported (metered), if any */
  costUsd: number | null;
  /**
   * tool steps: the id of the tool call this execution answered, when the span recorded it
   * (gen_ai.tool.call.id, OpenInference tool.id). Lets a tape put a tool after the model
   * answer that asked for it, and replay hand out tool results by call id.
   */
  toolCallId?: string | null;
}

/** Everything normalize knows about a span. */
export interface SpanFacts {
  /** run id carried by the span itself (session.id, gen_ai.conversation.id, ...), or null */
  ownRun: string | null;
  /** parent run named by an explicit attribute, or null */
  parentRun: string | null;
  /** the step this span is, or null when it is context (wrapper, HTTP, retrieval, unknown) */
  step: StepDraft | null;
}

/** A step as stored and served on a tape (docs/architecture.md "Steps"). */
export interface Step {
  index: number;
  kind: StepKind;
  name: string;
  model: string | null;
  tool: string | null;
  service: string | null;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  start_ns: bigint;
  duration_ns: bigint;
  status: StepStatus;
  request: JsonValue | null;
  response: JsonValue | null;
  request_digest: string | null;
  response_digest: string | null;
  fingerprint: string;
  tokens: Tokens;
  params: { [key: string]: JsonValue };
  layout: LayoutName;
  cost_usd: number | null;
  /** tool steps: the tool call id this execution answered, when recorded (see StepDraft.toolCallId) */
  tool_call_id?: string | null;
}

export interface Tape {
  run: string;
  tenant: string | null;
  spans_examined: number;
  truncated: boolean;
  steps: Step[];
  resolved_partial?: boolean;
}
