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

/** A span's key in maps and sets: its trace id and span id (hex). */
export function spanKey(traceId: string, spanId: string): string {
  return `${traceId}/${spanId}`;
}

/** A node's parent when it has none (or none was read). */
export const NO_NODE = -1;

export class SpanTree {
  /** node by span id, by trace id: no key string is built for a look-up */
  private readonly nodes = new Map<string, Map<string, number>>();
  private readonly parents: number[] = [];

  /** Each link once is enough: a span given again (a step among the spans read) keeps its parent. */
  constructor(...linkLists: readonly (readonly SpanLinkRow[])[]) {
    for (const links of linkLists) {
      for (const l of links) {
        const node = this.nodeOf(l.trace_id, l.span_id);
        if (l.parent_span_id && this.parents[node] === NO_NODE)
          this.parents[node] = this.nodeOf(l.trace_id, l.parent_span_id);
      }
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

  /**
   * The nearest ancestor of the node that `match` accepts, or NO_NODE. A walk that comes back
   * to the node, or goes on longer than there are nodes, is a cycle (bad input must not hang):
   * it finds nothing past it.
   */
  nearestAncestor(node: number, match: (ancestor: number) => boolean): number {
    let p = this.parents[node];
    for (let walked = 0; p !== NO_NODE && p !== node && walked < this.parents.length; walked++) {
      if (match(p)) return p;
      p = this.parents[p];
    }
    return NO_NODE;
  }
}
