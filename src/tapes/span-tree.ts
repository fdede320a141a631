/**
 * @module tapes/span-tree
 * Parent links of one run's spans (steps and context spans alike), keyed by trace and span
 * id, so the assembler can ask "is A an ancestor of B" and "which step encloses B" across
 * context spans (a workflow wrapper, an HTTP span) that are not on the tape themselves.
 * Each distinct span is a node, numbered in the order first seen: callers that walk the tree
 * for every step (collapse-duplicates.ts) work on node numbers, with arrays, rather than with
 * maps of string keys.
 */

/** The part of a stored span the assembler needs (the store's SpanLink satisfies it). */
export interface SpanLinkRow {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
}

export function spanKey(traceId: string, spanId: string): string {
  return `${traceId}/${spanId}`;
}

/** A node's parent when it has none (or none was read). */
export const NO_NODE = -1;

export class SpanTree {
  /** node by span id, by trace id: no key string is built for a look-up */
  private readonly nodes = new Map<string, Map<string, number>>();
  private readonly parents: number[] = [];

  constructor(links: Iterable<SpanLinkRow>) {
    for (const l of links) {
      const node = this.nodeOf(l.trace_id, l.span_id);
      if (l.parent_span_id) this.parents[node] = this.nodeOf(l.trace_id, l.parent_span_id);
    }
  }

  /** Nodes so far: every node number is below this. */
  get size(): number {
    return this.parents.length;
  }

  /** The span's node, made when first asked for. */
  nodeOf(traceId: string, spanId: string): number {
    let spans = this.nodes.get(traceId);
    if (!spans) {
      spans = new Map();
      this.nodes.set(traceId, spans);
    }
    let node = spans.get(spanId);
    if (node === undefined) {
      node = this.parents.length;
      spans.set(spanId, node);
      this.parents.push(NO_NODE);
    }
    return node;
  }

  /** The parent's node, or NO_NODE. */
  parentNode(node: number): number {
    return this.parents[node];
  }

  /** Ancestors' nodes nearest first; stops at a missing span or a cycle (bad input must not hang). */
  *ancestors(node: number): Generator<number> {
    // Most chains are a few spans long: a cycle is looked for only past a chain as long as
    // there are nodes, which no chain without one can be.
    let steps = 0;
    let seen: Set<number> | null = null;
    for (let p = this.parents[node]; p !== NO_NODE; p = this.parents[p]) {
      if (++steps > this.parents.length) {
        seen ??= new Set<number>([node]);
        if (seen.has(p)) return;
        seen.add(p);
      }
      if (p === node) return;
      yield p;
    }
  }
}
