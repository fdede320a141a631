/**
 * @module normalize/dialects/openinference-openai-agents
 * Two spans the OpenInference openai-agents instrumentors (Python _processor.py, JS
 * processor.ts) write that are not steps, though their span kind says TOOL or AGENT:
 * - a handoff (HandoffSpanData) is a TOOL span named `handoff to {to_agent}` (`handoff` while
 *   the target is unknown): the SDK moving control to another agent, not a tool the app
 *   executed. The agent handed to has its own AGENT span, and the model's transfer call and its
 *   output are in the model steps; as a tool step it would be handed out by replay's
 *   tools/next although the app never runs it.
 * - the trace root (on_trace_start / onTraceStart) is an AGENT span named after the SDK's
 *   Trace (`Agent workflow` unless the app names it): the workflow around the agents, which
 *   each have their own AGENT span. OpenLLMetry writes the same root as a workflow span.
 */
import type { SpanRecord } from '../../spans/span-record.js';

/** Python `openinference.instrumentation.openai_agents`, JS `@arizeai/openinference-instrumentation-openai-agents`. */
function isOpenAiAgentsScope(span: SpanRecord): boolean {
  const scope = span.scope.name;
  return scope.includes('openai_agents') || scope.includes('openai-agents');
}

/**
 * A handoff span. A function tool's span is named after the function (no spaces: OpenAI
 * function names are [a-zA-Z0-9_-]) and always carries tool.name; a handoff to an unknown
 * target is named `handoff` and carries none (the JS processor sets `handoff_to_{agent}` only
 * with a target).
 */
export function isOpenAiAgentsHandoff(span: SpanRecord): boolean {
  if (!isOpenAiAgentsScope(span)) return false;
  return span.name.startsWith('handoff to ') || (span.name === 'handoff' && span.attributes['tool.name'] === undefined);
}

/** The SDK's default Trace name (agents.tracing: trace(workflow_name="Agent workflow")). */
const DEFAULT_WORKFLOW_NAME = 'Agent workflow';

/**
 * The trace root. Agent spans carry their agent's identity (graph.node.id since Python 1.1 and
 * in JS, agent.name since Python 2.0); the root carries none. Older Python versions wrote
 * neither on agent spans, so without them the root is known by having no parent (an agent
 * span's parent is the root) or by the default name (the root under an app's own span). An
 * old version's agent span with no parent would be taken for the root: that happens only
 * when the root itself is missing (the processor always writes it first).
 */
export function isOpenAiAgentsTraceRoot(span: SpanRecord): boolean {
  if (!isOpenAiAgentsScope(span)) return false;
  const attrs = span.attributes;
  if (attrs['graph.node.id'] !== undefined || attrs['agent.name'] !== undefined) return false;
  return span.parentSpanId === null || span.name === DEFAULT_WORKFLOW_NAME;
}
