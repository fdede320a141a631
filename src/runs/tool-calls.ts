/**
 * @module runs/tool-calls
 * Every tool call of a run, in order, with its name, arguments and result. Pure.
 *
 * Two sources, as instrumentation allows:
 * - tool steps (execute_tool, Traceloop `withTool`, OpenInference TOOL spans): what the tool
 *   actually received and returned. Used whenever the run has them.
 * - the model's answers: each `tool_calls` entry of an llm step's response, with the result
 *   the agent sent back as a `role: "tool"` message (same `tool_call_id`) in a later model
 *   call's request. Used for calls no tool step recorded.
 *
 * A tool step is matched to the model's call it answered by tool call id when the span
 * recorded one, else to the first unmatched call of the same tool name asked before it. The
 * match lends each side what the other lacks: the id (tool spans seldom carry it), and the
 * arguments and result when the tool span recorded no content. Order: tool steps in tape
 * order; a call only the model's answer knows comes right after the step before it in the
 * model's own order (its answer, or the previous call of that answer).
 */
import type { Step, StepStatus } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { messagesOf } from './messages.js';

export interface ReconstructedToolCall {
  /** the tool call id, when any source recorded it */
  id: string | null;
  name: string;
  /** null when not recorded */
  arguments: JsonValue | null;
  /** null when not recorded (or never sent back) */
  result: JsonValue | null;
  /** the tool step's status; null when only the model's messages know the call */
  status: StepStatus | null;
  source: 'tool_step' | 'model_messages';
}

interface AskedCall {
  id: string | null;
  name: string;
  arguments: JsonValue | null;
  /** index of the llm step whose answer asked for it */
  stepIndex: number;
  matched: Step | null;
}

/** Results sent back to the model: tool_call_id → content of the role:"tool" message. */
function sentResults(steps: readonly Step[]): Map<string, JsonValue | null> {
  const out = new Map<string, JsonValue | null>();
  for (const s of steps) {
    for (const m of messagesOf(s.request) ?? []) {
      if (m.role === 'tool' && m.tool_call_id && !out.has(m.tool_call_id)) out.set(m.tool_call_id, m.content ?? null);
    }
  }
  return out;
}

function askedCalls(llm: readonly Step[]): AskedCall[] {
  const out: AskedCall[] = [];
  const seen = new Set<string>();
  for (const s of llm) {
    for (const m of messagesOf(s.response) ?? []) {
      for (const c of m.tool_calls ?? []) {
        // The same call in two answers (a model call recorded twice) is one call.
        if (c.id) {
          if (seen.has(c.id)) continue;
          seen.add(c.id);
        }
        out.push({ id: c.id ?? null, name: c.name, arguments: c.arguments ?? null, stepIndex: s.index, matched: null });
      }
    }
  }
  return out;
}

function matchFor(step: Step, asked: AskedCall[]): AskedCall | undefined {
  const free = (a: AskedCall) => a.matched === null && a.stepIndex < step.index;
  if (step.tool_call_id) return asked.find((a) => free(a) && a.id === step.tool_call_id);
  return asked.find((a) => free(a) && a.name === (step.tool ?? step.name));
}

export function reconstructToolCalls(steps: readonly Step[]): ReconstructedToolCall[] {
  const llm = steps.filter((s) => s.kind === 'llm');
  const tools = steps.filter((s) => s.kind === 'tool');
  const asked = askedCalls(llm);
  const results = sentResults(llm);
  const resultOf = (id: string | null) =>
    id !== null && results.has(id) ? (results.get(id) as JsonValue | null) : null;

  const keyed: { key: number; order: number; call: ReconstructedToolCall }[] = [];
  for (const step of tools) {
    const match = matchFor(step, asked);
    if (match) match.matched = step;
    const id = step.tool_call_id ?? match?.id ?? null;
    keyed.push({
      key: step.index,
      order: keyed.length,
      call: {
        id,
        name: step.tool ?? step.name,
        arguments: step.request ?? match?.arguments ?? null,
        result: step.response ?? resultOf(id),
        status: step.status,
        source: 'tool_step',
      },
    });
  }
  // Calls no tool step answered, placed after what precedes them in the model's order.
  let previousStep = -1;
  let previousKey = -1;
  for (const a of asked) {
    if (a.stepIndex !== previousStep) {
      previousStep = a.stepIndex;
      previousKey = a.stepIndex;
    }
    if (a.matched) {
      previousKey = Math.max(previousKey, a.matched.index);
      continue;
    }
    previousKey += 1e-6;
    keyed.push({
      key: previousKey,
      order: keyed.length,
      call: {
        id: a.id,
        name: a.name,
        arguments: a.arguments,
        result: resultOf(a.id),
        status: null,
        source: 'model_messages',
      },
    });
  }
  return keyed.sort((x, y) => x.key - y.key || x.order - y.order).map((k) => k.call);
}
