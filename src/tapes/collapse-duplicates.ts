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
import { spanKey, type SpanTree } from './span-tree.js';

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

/** The nearest step enclosing each llm step, across context spans. */
function enclosingSteps(byKey: ReadonlyMap<string, StepRow>, tree: SpanTree): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, step] of byKey) {
    if (step.kind !== 'llm') continue;
    for (const a of tree.ancestors(key)) {
      if (!byKey.has(a)) continue; // context span: keep walking
      out.set(key, a);
      break;
    }
  }
  return out;
}

/** Steps with each duplicate pair (or chain) folded into one, in input order. */
export function collapseDuplicateCalls(steps: readonly StepRow[], tree: SpanTree): StepRow[] {
  // Each step's key made once: a key made again is a new string to hash again.
  const keys = steps.map((s) => spanKey(s.trace_id, s.span_id));
  const byKey = new Map(steps.map((s, i) => [keys[i], s]));
  const enclosing = enclosingSteps(byKey, tree);
  const enclosedCalls = new Map<string, number>();
  for (const outer of enclosing.values()) enclosedCalls.set(outer, (enclosedCalls.get(outer) ?? 0) + 1);
  // The outermost step of each duplicate chain stands for the chain.
  const headOf = new Map<string, string>();
  const findHead = (key: string): string => {
    const known = headOf.get(key);
    if (known) return known;
    const step = byKey.get(key) as StepRow;
    headOf.set(key, key); // a parent cycle (bad input) ends here rather than recursing forever
    let head = key;
    const outer = enclosing.get(key);
    if (outer !== undefined && enclosedCalls.get(outer) === 1 && sameCall(step, byKey.get(outer) as StepRow)) {
      head = findHead(outer);
    }
    headOf.set(key, head);
    return head;
  };
  const groups = new Map<string, StepRow[]>();
  for (let i = 0; i < steps.length; i++) {
    const s = steps[i];
    const head = findHead(keys[i]);
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
    const outer = byKey.get(head) as StepRow;
    let kept = outer;
    for (const m of members) if (completeness(m) > completeness(kept)) kept = m;
    for (const m of members) if (m !== kept) kept = merge(kept, m);
    out.push(kept);
  }
  return out;
}
