/**
 * @module tapes/run-resolution
 * The rule of resolve-runs.ts, computed in memory for the spans of a batch's traces, so
 * ingest can insert new spans with their run already set and update only the stored spans
 * whose run changed, instead of inserting with no run and rewriting every span of the
 * traces (an UPDATE writes a new version of each row and its index entries).
 *
 * Same rule, step for step (resolve-runs.ts is the reference):
 * - roots are spans without a parent span, or whose parent span is not stored in the trace;
 *   a root's run is its own run, else `trace:<trace_id>`, and its parent run its own parent run;
 * - a child's run is its own run, else its parent's; its parent run is its own parent run,
 *   else its parent's run when it carries a run of its own that differs from its parent's;
 * - parent_run is a property of the run: every span of a run (across the traces resolved
 *   together) takes the run's parent run (max() in SQL);
 * - a span no root reaches (a parent chain that loops) keeps a run it has, else takes its
 *   own run or `trace:<trace_id>`, and keeps its parent run.
 * Where SQL's max() would choose between two different parent runs of one run, the choice
 * depends on the server's collation: resolveRunsInMemory then answers 'ambiguous' and the
 * caller lets resolve-runs.ts decide. test/integration/tapes-run-resolution.test.ts holds the
 * two equal over random traces on PGlite and PostgreSQL.
 */

import { spanKey } from './span-tree.js';

/** A span's run facts; runId and parentRun are what is stored now (null for a new span). */
export interface RunNode {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  ownRun: string | null;
  ownParentRun: string | null;
  runId: string | null;
  parentRun: string | null;
}

export interface RunOf {
  runId: string | null;
  parentRun: string | null;
}

/** The run of every node, keyed by spanKey; 'ambiguous' as explained above. */
export function resolveRunsInMemory(nodes: readonly RunNode[]): Map<string, RunOf> | 'ambiguous' {
  const byKey = new Map<string, RunNode>();
  for (const n of nodes) byKey.set(spanKey(n.traceId, n.spanId), n);
  const children = new Map<string, RunNode[]>();
  const tree: { node: RunNode; runId: string; parentRun: string | null }[] = [];
  for (const n of nodes) {
    const parentKey = n.parentSpanId === null ? null : spanKey(n.traceId, n.parentSpanId);
    if (parentKey === null || !byKey.has(parentKey)) {
      tree.push({ node: n, runId: n.ownRun ?? `trace:${n.traceId}`, parentRun: n.ownParentRun });
    } else {
      const list = children.get(parentKey);
      if (list) list.push(n);
      else children.set(parentKey, [n]);
    }
  }
  // Breadth first from the roots, as the recursive CTE walks; each span has one parent, so
  // each is reached at most once.
  for (let i = 0; i < tree.length; i++) {
    const parent = tree[i];
    for (const c of children.get(spanKey(parent.node.traceId, parent.node.spanId)) ?? []) {
      const runId = c.ownRun ?? parent.runId;
      const parentRun =
        c.ownParentRun !== null ? c.ownParentRun : c.ownRun !== null && c.ownRun !== parent.runId ? parent.runId : null;
      tree.push({ node: c, runId, parentRun });
    }
  }
  const parentOfRun = new Map<string, string | null>();
  for (const t of tree) {
    const known = parentOfRun.get(t.runId);
    if (t.parentRun === null) {
      if (known === undefined) parentOfRun.set(t.runId, null);
    } else if (known === undefined || known === null) {
      parentOfRun.set(t.runId, t.parentRun);
    } else if (known !== t.parentRun) {
      return 'ambiguous';
    }
  }
  const out = new Map<string, RunOf>();
  for (const t of tree)
    out.set(spanKey(t.node.traceId, t.node.spanId), { runId: t.runId, parentRun: parentOfRun.get(t.runId) ?? null });
  for (const n of nodes) {
    const key = spanKey(n.traceId, n.spanId);
    if (!out.has(key)) out.set(key, { runId: n.runId ?? n.ownRun ?? `trace:${n.traceId}`, parentRun: n.parentRun });
  }
  return out;
}
