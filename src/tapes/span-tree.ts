/**
 * @module tapes/span-tree
 * Parent links of one run's spans (steps and context spans alike), keyed by trace and span
 * id, so the assembler can ask "is A an ancestor of B" and "which step encloses B" across
 * context spans (a workflow wrapper, an HTTP span) that are not on the tape themselves.
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

export class SpanTree {
  private readonly parentOf = new Map<string, string>();

  constructor(links: Iterable<SpanLinkRow>) {
    for (const l of links) {
      if (l.parent_span_id) this.parentOf.set(spanKey(l.trace_id, l.span_id), spanKey(l.trace_id, l.parent_span_id));
    }
  }

  parent(key: string): string | undefined {
    return this.parentOf.get(key);
  }

  /** Ancestors nearest first; stops at a missing span or a cycle (bad input must not hang). */
  *ancestors(key: string): Generator<string> {
    // Most chains are a few spans long: a cycle is looked for only past a chain as long as
    // there are links, which no chain without one can be.
    let steps = 0;
    let seen: Set<string> | null = null;
    for (let p = this.parentOf.get(key); p !== undefined; p = this.parentOf.get(p)) {
      if (++steps > this.parentOf.size) {
        seen ??= new Set<string>([key]);
        if (seen.has(p)) return;
        seen.add(p);
      }
      if (p === key) return;
      yield p;
    }
  }

  isAncestor(ancestor: string, of: string): boolean {
    for (const a of this.ancestors(of)) if (a === ancestor) return true;
    return false;
  }
}
