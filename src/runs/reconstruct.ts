/**
 * @module runs/reconstruct
 * What a run was, rebuilt from its tape alone, with no model call (docs/architecture.md, invariant 8):
 * the prompt of its first model call, its final answer, every tool call, and how it ended.
 * Pure: a resolved Tape (payload references inlined) in, a ReconstructedRun out.
 *
 * - input: the request messages (system, history, user) of the run's first model call;
 *   null when that call's content was not recorded (content capture off).
 * - output: the final answer: the text of the last model call's answer, when that call
 *   succeeded and answered instead of asking for tools (Anthropic's text before a tool_use
 *   is not an answer). A JSON-shaped answer is given as compact JSON text.
 * - tool_calls: see tool-calls.ts.
 * - status, first that applies:
 *   `truncated`  the tape was cut at its span cap, or a payload it needs stayed a reference
 *                (over the resolve budget, missing): what is shown may be incomplete;
 *   `error`      the run's outcome is failure (tapedeck.runs), the last model call failed,
 *                or an agent step no other step of the run encloses failed;
 *   `cancelled`  nothing failed, but the run stopped before a final answer: its last model
 *                call asked for tools and no model call followed (or tools ran after it);
 *   `complete`   otherwise. A run with no model call is complete when nothing in it failed.
 *   `status_reason` says which rule decided. `outcome` (success/failure/unknown, from
 *   tapedeck.runs) is reported beside it: `unknown` means the run may still be going.
 */
import type { Message, Step, Tape } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import type { RunSummary } from '../tapes/run-reader.js';
import { answerText, holdsPayloadRef, llmSteps, messagesOf } from './messages.js';
import { reconstructToolCalls, type ReconstructedToolCall } from './tool-calls.js';

export type { ReconstructedToolCall } from './tool-calls.js';

export type RunStatus = 'complete' | 'error' | 'cancelled' | 'truncated';

export interface ReconstructedRun {
  run: string;
  parent_run: string | null;
  /** from tapedeck.runs; null when not given */
  outcome: RunSummary['outcome'] | null;
  status: RunStatus;
  status_reason: string;
  /** model of the first model call */
  model: string | null;
  model_calls: number;
  input: Message[] | null;
  output: string | null;
  tool_calls: ReconstructedToolCall[];
  /** first step's start and last step's end (Unix ns); null for a run without steps */
  start_ns: bigint | null;
  end_ns: bigint | null;
}

/** What the runs view knows about the run, when the caller has it. */
export type ReconstructContext = Pick<RunSummary, 'parent_run' | 'outcome'>;

export function reconstructRun(tape: Tape, facts?: ReconstructContext): ReconstructedRun {
  const steps = tape.steps;
  const llm = llmSteps(steps);
  const first = llm[0];
  const last = llm[llm.length - 1];
  const answer = last && last.status !== 'error' ? messagesOf(last.response) : null;
  const toolCalls = reconstructToolCalls(steps);
  const input = first ? messagesOf(first.request) : null;
  const { status, reason } = statusOf(tape, facts, { first, last, answer, toolCalls });
  return {
    run: tape.run,
    parent_run: facts?.parent_run ?? null,
    outcome: facts?.outcome ?? null,
    status,
    status_reason: reason,
    model: first?.model ?? null,
    model_calls: llm.length,
    input: input ? copy(input) : null,
    output: answer ? answerText(answer) : null,
    tool_calls: toolCalls,
    start_ns: steps.length ? steps.reduce((m, s) => (s.start_ns < m ? s.start_ns : m), steps[0].start_ns) : null,
    end_ns: steps.length
      ? steps.reduce((m, s) => (s.start_ns + s.duration_ns > m ? s.start_ns + s.duration_ns : m), 0n)
      : null,
  };
}

interface Parts {
  first: Step | undefined;
  last: Step | undefined;
  answer: Message[] | null;
  toolCalls: ReconstructedToolCall[];
}

function statusOf(tape: Tape, facts: ReconstructContext | undefined, p: Parts): { status: RunStatus; reason: string } {
  if (tape.truncated)
    return { status: 'truncated', reason: `the tape was cut at its cap of ${tape.spans_examined} spans` };
  const needed: (JsonValue | null)[] = [
    p.first?.request ?? null,
    p.last?.response ?? null,
    ...p.toolCalls.flatMap((c) => [c.arguments, c.result]),
  ];
  if (tape.resolved_partial || needed.some(holdsPayloadRef)) {
    return {
      status: 'truncated',
      reason: 'some offloaded content was not inlined (over the resolve budget, or unreadable)',
    };
  }
  if (facts?.outcome === 'failure') return { status: 'error', reason: 'a span that starts or ends the run failed' };
  if (p.last?.status === 'error') return { status: 'error', reason: 'the last model call failed' };
  const enclosing = new Set(tape.steps.map((s) => s.span_id));
  const failedAgent = tape.steps.find(
    (s) => s.kind === 'agent' && s.status === 'error' && !(s.parent_span_id && enclosing.has(s.parent_span_id)),
  );
  if (failedAgent) return { status: 'error', reason: `the agent ${JSON.stringify(failedAgent.name)} failed` };
  if (p.last) {
    if (p.answer?.some((m) => m.tool_calls?.length)) {
      return { status: 'cancelled', reason: 'the last model call asked for tool calls and no model call followed' };
    }
    const lastIndex = p.last.index;
    if (tape.steps.some((s) => s.kind === 'tool' && s.index > lastIndex)) {
      return { status: 'cancelled', reason: 'tools ran after the last model call and no model call followed' };
    }
  }
  return { status: 'complete', reason: p.last ? 'the last model call answered' : 'no step failed' };
}

function copy<T>(value: T): T {
  return structuredClone(value);
}
