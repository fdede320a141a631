/**
 * @module tapes/collapse-duplicates
 * Two spans for one model call (an instrumentation's span and the provider SDK's own span
 * nested inside it, with the same request) are one step (docs/architecture.md, "One call, two
 * spans"). With Anthropic SDK ≥ 0.137 installed, every third-party Anthropic instrumentation
 * yields its own LLM span plus the SDK's `anthropic.messages.create` child (the
 * openllmetry-anthropic and openinference-anthropic captures in test/fixtures/corpus).
 *
 * Rule: an llm step whose nearest enclosing step is an llm step is the same call when that
 * step encloses no other llm step (one span for one span: a wrapper around several model
 * calls is not any one of them) and their request digests are equal or either was not
 * recorded (the SDK's span records no content by default). The pair keeps the more complete
 * step; a token count or model only the other recorded fills the kept step's null, and the
 * status is the more informative of the two (error, else ok, else unset). The runs view
 * counts by the same rule (tapedeck_store.run_steps, migration 0016).
 */
import type { StepRow } from '../normalize/finish.js';
import type { StepStatus, Tokens } from '../normalize/step.js';
import { NO_NODE, type SpanTree } from './span-tree.js';

function completeness(s: StepRow): number {
  let score = 0;
  if (s.request !== null) score += 8;
  if (s.response !== null) score += 8;
  if (s.model !== null) score += 1;
  for (const v of Object.values(s.tokens)) if (v !== null) score += 1;
  return score;
}

function sameCall(inner: StepRow, outer: StepRow): boolean {
  return (
    inner.kind === 'llm' &&
    outer.kind === 'llm' &&
    (inner.request_digest === null || outer.request_digest === null || inner.request_digest === outer.request_digest)
  );
}

const STATUS_RANK: Record<StepStatus, number> = { error: 2, ok: 1, unset: 0 };

function merge(kept: StepRow, other: StepRow): StepRow {
  const tokens = { ...kept.tokens };
  for (const k of Object.keys(tokens) as (keyof Tokens)[]) if (tokens[k] === null) tokens[k] = other.tokens[k];
  return {
    ...kept,
    model: kept.model ?? other.model,
    tokens,
    status: STATUS_RANK[other.status] > STATUS_RANK[kept.status] ? other.status : kept.status,
    cost_usd: kept.cost_usd ?? other.cost_usd,
  };
}

/**
 * Steps with each duplicate pair (or chain) folded into one, in input order. Works on the
 * tree's node numbers: a tape of 10,000 steps walks them all, and arrays cost a fraction of
 * maps of string keys there. Two steps of one span (bad input) count as the later one.
 */
export function collapseDuplicateCalls(steps: readonly StepRow[], tree: SpanTree): StepRow[] {
  const nodes = steps.map((s) => tree.nodeOf(s.trace_id, s.span_id));
  const stepAt = new Int32Array(tree.size).fill(-1);
  nodes.forEach((node, i) => {
    stepAt[node] = i;
  });
  // The nearest step enclosing each llm step, across context spans.
  const enclosing = new Int32Array(tree.size).fill(NO_NODE);
  const enclosedCalls = new Int32Array(tree.size);
  const isStep = (node: number) => stepAt[node] >= 0;
  for (let node = 0; node < stepAt.length; node++) {
    if (!isStep(node) || steps[stepAt[node]].kind !== 'llm') continue;
    const outer = tree.nearestAncestor(node, isStep);
    if (outer === NO_NODE) continue;
    enclosing[node] = outer;
    enclosedCalls[outer]++;
  }
  // The outermost step of each duplicate chain stands for the chain.
  const headOf = new Int32Array(tree.size).fill(NO_NODE);
  const findHead = (node: number): number => {
    if (headOf[node] !== NO_NODE) return headOf[node];
    headOf[node] = node; // a parent cycle (bad input) ends here rather than recursing forever
    let head = node;
    const outer = enclosing[node];
    if (outer !== NO_NODE && enclosedCalls[outer] === 1 && sameCall(steps[stepAt[node]], steps[stepAt[outer]])) {
      head = findHead(outer);
    }
    headOf[node] = head;
    return head;
  };
  const groups = new Map<number, StepRow[]>();
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    const head = findHead(nodes[i]);
    const g = groups.get(head);
    if (g) g.push(s);
    else groups.set(head, [s]);
  }
  const out: StepRow[] = [];
  for (const [head, members] of groups) {
    if (members.length === 1) {
      out.push(members[0]);
      continue;
    }
    // Most complete wins; on a tie the outer (instrumentation) span, which is the head.
    const outer = steps[stepAt[head]];
    let kept = outer;
    for (const m of members) if (completeness(m) > completeness(kept)) kept = m;
    for (const m of members) if (m !== kept) kept = merge(kept, m);
    out.push(kept);
  }
  return out;
}
