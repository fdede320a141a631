/**
 * @module tapes/step-order
 * Step order (docs/architecture.md "Step order"): start time first; instrumentations round
 * start times to the millisecond, so ties are broken by causality (an ancestor before its
 * descendants, a model answer before the tool calls it asked for, in the order it asked for
 * them), then end time, then span id. Real captures have parent and child, and a model call
 * and the tools it asked for, sharing a start millisecond, with the second of two parallel
 * tools ending first, so end time alone would misorder them.
 *
 * Causal edges, applied only between steps with the same start time:
 * - an ancestor span before its descendants;
 * - a model step before each tool step that executed one of its answer's tool calls, and
 *   those tool steps in the order the calls were asked for;
 * - a tool step before the model step whose request carries that tool's result.
 * A tool step is matched to a call by tool-call id when it recorded one, else by tool name
 * and arguments (Traceloop and OpenInference tool spans carry no id).
 */
import type { StepRow } from '../normalize/finish.js';
import type { JsonValue } from '../json/json-value.js';
import { canonicalJson } from '../json/canonical.js';
import { comparableForm } from '../normalize/comparable.js';
import { NO_NODE, type SpanTree } from './span-tree.js';

interface AskedCall {
  llm: number;
  position: number;
  id: string | null;
  name: string;
  args: string | null;
}

function messagesOf(v: JsonValue | null): { [k: string]: JsonValue }[] {
  return Array.isArray(v)
    ? (v.filter((m) => m !== null && typeof m === 'object' && !Array.isArray(m)) as { [k: string]: JsonValue }[])
    : [];
}

function argsKey(v: JsonValue | undefined | null): string | null {
  if (v === undefined || v === null) return null;
  try {
    return canonicalJson(comparableForm(v)); // text in one layout, a value in another
  } catch {
    return null;
  }
}

/** Tool calls each model step's answer asked for (an offloaded answer asks for nothing we can see). */
function askedCalls(steps: readonly StepRow[]): AskedCall[] {
  const calls: AskedCall[] = [];
  steps.forEach((s, llm) => {
    if (s.kind !== 'llm') return;
    let position = 0;
    for (const m of messagesOf(s.response)) {
      if (!Array.isArray(m.tool_calls)) continue;
      for (const raw of m.tool_calls) {
        const c = raw as { id?: string; name?: string; arguments?: JsonValue };
        if (typeof c?.name !== 'string') continue;
        calls.push({
          llm,
          position: position++,
          id: typeof c.id === 'string' ? c.id : null,
          name: c.name,
          args: argsKey(c.arguments),
        });
      }
    }
  });
  return calls;
}

/** For each tool step, the call it executed, if it can be told. */
function matchTools(steps: readonly StepRow[], calls: AskedCall[]): Map<number, AskedCall> {
  const matched = new Map<number, AskedCall>();
  const taken = new Set<AskedCall>();
  steps.forEach((s, i) => {
    if (s.kind !== 'tool') return;
    let best: AskedCall | undefined;
    if (s.tool_call_id) {
      best = calls.find((c) => c.id === s.tool_call_id);
    } else {
      const args = argsKey(s.request);
      if (args === null) return;
      // The latest model step at or before this tool that asked for it and is not yet used.
      for (const c of calls) {
        if (taken.has(c) || c.name !== (s.tool ?? s.name) || c.args !== args) continue;
        if (steps[c.llm].start_ns > s.start_ns) continue;
        if (!best || steps[c.llm].start_ns >= steps[best.llm].start_ns) best = c;
      }
    }
    if (best) {
      matched.set(i, best);
      taken.add(best);
    }
  });
  return matched;
}

/** Model steps whose request answers a tool call id, by that id. */
function consumersById(steps: readonly StepRow[]): Map<string, number[]> {
  const byId = new Map<string, number[]>();
  steps.forEach((s, i) => {
    if (s.kind !== 'llm') return;
    for (const m of messagesOf(s.request)) {
      if (m.role !== 'tool' || typeof m.tool_call_id !== 'string') continue;
      const list = byId.get(m.tool_call_id);
      if (list) {
        if (!list.includes(i)) list.push(i);
      } else byId.set(m.tool_call_id, [i]);
    }
  });
  return byId;
}

function endOf(s: StepRow): bigint {
  return s.start_ns + s.duration_ns;
}

function compareFallback(a: StepRow, b: StepRow): number {
  const ea = endOf(a),
    eb = endOf(b);
  if (ea !== eb) return ea < eb ? -1 : 1;
  return a.span_id < b.span_id ? -1 : a.span_id > b.span_id ? 1 : 0;
}

/**
 * Causal edges among one tie group (indices into steps), as successor lists. Built from
 * each member's ancestors, matched call and consumers, so the cost is linear in the group
 * size times tree depth, not quadratic: a run of thousands of same-millisecond steps (a
 * coarse-clock exporter) stays cheap.
 */
function groupEdges(
  group: number[],
  steps: readonly StepRow[],
  tree: SpanTree,
  matched: Map<number, AskedCall>,
  consumers: Map<string, number[]>,
): Map<number, number[]> {
  const members = new Set(group);
  const nodeToIndex = new Map(group.map((i) => [tree.nodeOf(steps[i].trace_id, steps[i].span_id), i]));
  const edges = new Map<number, number[]>();
  const add = (a: number, b: number) => {
    if (a === b || !members.has(a) || !members.has(b)) return;
    const list = edges.get(a);
    if (list) list.push(b);
    else edges.set(a, [b]);
  };
  const byLlm = new Map<number, { position: number; tool: number }[]>();
  for (const b of group) {
    const s = steps[b];
    // An ancestor before its descendants. The nearest ancestor in the group is enough: any
    // further one is an ancestor of that one, so the chain of nearest edges orders them all.
    const nearest = tree.nearestAncestor(tree.nodeOf(s.trace_id, s.span_id), (node) => nodeToIndex.has(node));
    if (nearest !== NO_NODE) add(nodeToIndex.get(nearest)!, b);
    const m = matched.get(b);
    if (!m) continue;
    add(m.llm, b); // the answer before the tools it asked for
    const list = byLlm.get(m.llm);
    if (list) list.push({ position: m.position, tool: b });
    else byLlm.set(m.llm, [{ position: m.position, tool: b }]);
    if (m.id) for (const c of consumers.get(m.id) ?? []) add(b, c); // a tool before the call reading its result
  }
  for (const tools of byLlm.values()) {
    tools.sort((x, y) => x.position - y.position); // in the order asked
    for (let k = 1; k < tools.length; k++) add(tools[k - 1].tool, tools[k].tool);
  }
  return edges;
}

/** Orders steps by start time, then causality, end time and span id; returns a new array. */
export function orderSteps(steps: readonly StepRow[], tree: SpanTree): StepRow[] {
  const matched = matchTools(steps, askedCalls(steps));
  const consumers = consumersById(steps);
  const byStart = steps
    .map((_, i) => i)
    .sort((a, b) => {
      const sa = steps[a].start_ns,
        sb = steps[b].start_ns;
      return sa !== sb ? (sa < sb ? -1 : 1) : compareFallback(steps[a], steps[b]);
    });
  const out: StepRow[] = [];
  for (let i = 0; i < byStart.length; ) {
    let j = i + 1;
    while (j < byStart.length && steps[byStart[j]].start_ns === steps[byStart[i]].start_ns) j++;
    const group = byStart.slice(i, j);
    const ordered = group.length === 1 ? group : orderTies(group, groupEdges(group, steps, tree, matched, consumers));
    for (const k of ordered) out.push(steps[k]);
    i = j;
  }
  return out;
}

/**
 * Kahn's algorithm over one tie group given in fallback order (end time, span id): among
 * the steps free to go next, the earliest in that order (a min-heap of ranks). A cycle —
 * contradictory input — releases the earliest remaining step rather than dropping anything.
 */
function orderTies(group: number[], edges: Map<number, number[]>): number[] {
  const rank = new Map(group.map((g, r) => [g, r]));
  const indegree = new Map(group.map((g) => [g, 0]));
  for (const succ of edges.values()) for (const b of succ) indegree.set(b, (indegree.get(b) ?? 0) + 1);
  const heap = new RankHeap();
  for (const g of group) if (indegree.get(g) === 0) heap.push(rank.get(g) as number);
  const done = new Set<number>();
  const out: number[] = [];
  let scan = 0; // for cycles: the earliest step not yet placed
  while (out.length < group.length) {
    let r = heap.pop();
    while (r !== undefined && done.has(group[r])) r = heap.pop();
    if (r === undefined) {
      while (done.has(group[scan])) scan++;
      r = scan;
    }
    const next = group[r];
    done.add(next);
    out.push(next);
    for (const b of edges.get(next) ?? []) {
      const d = (indegree.get(b) ?? 0) - 1;
      indegree.set(b, d);
      if (d === 0 && !done.has(b)) heap.push(rank.get(b) as number);
    }
  }
  return out;
}

class RankHeap {
  private readonly a: number[] = [];
  push(v: number): void {
    const a = this.a;
    a.push(v);
    for (let i = a.length - 1; i > 0; ) {
      const p = (i - 1) >> 1;
      if (a[p] <= a[i]) break;
      [a[p], a[i]] = [a[i], a[p]];
      i = p;
    }
  }
  pop(): number | undefined {
    const a = this.a;
    if (a.length === 0) return undefined;
    const top = a[0];
    const last = a.pop() as number;
    if (a.length) {
      a[0] = last;
      for (let i = 0; ; ) {
        const l = 2 * i + 1,
          r = l + 1;
        let m = i;
        if (l < a.length && a[l] < a[m]) m = l;
        if (r < a.length && a[r] < a[m]) m = r;
        if (m === i) break;
        [a[m], a[i]] = [a[i], a[m]];
        i = m;
      }
    }
    return top;
  }
}
