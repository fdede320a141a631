/**
 * @module tapes/assemble
 * A run's stored rows → its tape: the ordered, numbered steps. Pure (no I/O, no clock).
 *
 * Input: the run's step rows (StepRow: a Step without its index, as the store keeps it) and
 * the parent links of every span read for the run, context spans included (workflow
 * wrappers, HTTP spans), so ancestry between steps is known across them. The store's
 * RunRows ({steps, spans}) is accepted as is.
 *
 * 1. Duplicate model spans (an instrumentation's span and the provider SDK's span nested in
 *    it, same request) become one step (collapse-duplicates.ts).
 * 2. Steps are ordered by start time, ties broken by causality, then end time, then span id
 *    (step-order.ts).
 * 3. Steps are numbered from 0.
 */
import type { Step } from '../normalize/step.js';
import type { StepRow } from '../normalize/finish.js';
import { collapseDuplicateCalls } from './collapse-duplicates.js';
import { orderSteps } from './step-order.js';
import { SpanTree, type SpanLinkRow } from './span-tree.js';

export type { SpanLinkRow } from './span-tree.js';
export type { StepRow } from '../normalize/finish.js';

export interface AssembleInput {
  steps: readonly StepRow[];
  /** parent links of the run's spans (steps' own links are taken from the steps) */
  spans?: readonly SpanLinkRow[];
}

export function assembleTape(input: AssembleInput): Step[] {
  return orderedSteps(input).map((s, index) => ({ index, ...s }));
}

/** The steps of assembleTape in order, not yet numbered: a step's index is its place here. */
export function orderedSteps(input: AssembleInput): StepRow[] {
  const tree = new SpanTree(input.spans ?? [], input.steps);
  const steps = collapseDuplicateCalls(input.steps, tree);
  return orderSteps(steps, tree);
}
