/**
 * Test helper: which ground-truth steps a capture's tape can hold, per what each library
 * provably emits (docs/support.md "Known gaps in the captured libraries"), and the tape's steps aligned with them.
 */
import type { Capture, GroundTruthStep } from './corpus.js';
import type { Step } from '../../src/normalize/step.js';
import { tapesOf, type RunTape } from './tapes.js';

/** These instrumentations end the chat span only on success — a failed call has no span. */
export const FAILED_CALL_LEAVES_NO_SPAN = new Set(['openllmetry-openai', 'openinference-openai']);
/**
 * The bare instrumentation makes each model call its own trace, with
 * no session key, and no tool spans (only the Traceloop SDK's decorators make those).
 */
export const NO_SESSION_KEY = new Set(['openllmetry-openai-bare']);
export const NO_TOOL_SPANS = new Set(['openllmetry-openai-bare']);

/** Ground truths say content_capture only where it was switched off. */
export function contentCaptured(c: Capture): boolean {
  return c.groundTruth.content_capture !== false;
}

export function expectedSteps(c: Capture): GroundTruthStep[] {
  return c.groundTruth.steps.filter((s) => {
    if (s.type === 'tool_call') return !NO_TOOL_SPANS.has(c.layout);
    if (s.type !== 'model_call') return false; // agent_error: the agent step's status says it
    return !(s.error && FAILED_CALL_LEAVES_NO_SPAN.has(c.layout));
  });
}

export function capturedTapes(c: Capture): RunTape[] {
  return tapesOf(c.spans, c.logs);
}

/** The tape's model and tool steps next to the ground-truth steps they record (same count, same order). */
export function alignedSteps(c: Capture): { truth: GroundTruthStep; step: Step }[] {
  const steps = capturedTapes(c)
    .flatMap((t) => t.steps)
    .filter((s) => s.kind !== 'agent');
  const truth = expectedSteps(c);
  if (steps.length !== truth.length)
    throw new Error(`${c.layout}/${c.scenario}: ${steps.length} steps, ground truth ${truth.length}`);
  return truth.map((t, i) => ({ truth: t, step: steps[i] }));
}
