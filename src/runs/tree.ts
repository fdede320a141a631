/**
 * @module runs/tree
 * A multi-agent coordination as a tree: a run plus every descendant run (children linked by
 * parent run, tapes/resolve-runs.ts), each reconstructed with no model call, children in
 * start order (first span start, then run id).
 *
 * Bounded (docs/architecture.md, invariant 6), breadth first, so the levels nearest the root are kept
 * when a limit is hit:
 * - max_depth (default 8): levels below the root; runs deeper are left out;
 * - max_children (default 100): children shown per run, the earliest;
 * - max_runs (default 500): runs in the whole tree, root included;
 * - content: each run's payloads are inlined within the per-run budget (--tape-max-bytes),
 *   and all the reconstructed content held for one tree within maxTreeBytes (default 32 MiB);
 *   past it, further runs keep their payload references (their status says truncated).
 * A node whose children (or deeper runs) were left out says `children_truncated`; the tree
 * says `truncated` and which limits did it (`truncated_by`). A parent link that loops back to
 * a run already in the tree is not followed.
 */
import type { Deadline } from '../deadline/deadline.js';
import type { TapeDeps } from '../tapes/tape-service.js';
import { renderJson } from '../json/canonical.js';
import { readChildRuns } from '../tapes/child-runs.js';
import { readRunFacts, type RunFacts } from './run-pages.js';
import type { ReconstructedRun } from './reconstruct.js';
import { reconstructStoredRun } from './run-service.js';

export interface TreeLimits {
  maxDepth: number;
  maxChildren: number;
  maxRuns: number;
}

export const DEFAULT_TREE_LIMITS: Readonly<TreeLimits> = Object.freeze({ maxDepth: 8, maxChildren: 100, maxRuns: 500 });
/** the most a caller may ask for */
export const TREE_LIMIT_CEILINGS: Readonly<TreeLimits> = Object.freeze({
  maxDepth: 64,
  maxChildren: 1000,
  maxRuns: 2000,
});
export const DEFAULT_MAX_TREE_BYTES = 32 * 1024 * 1024;

export type TreeLimitName = 'depth' | 'children' | 'runs' | 'content';

export interface RunTreeNode extends ReconstructedRun {
  depth: number;
  children: RunTreeNode[];
  children_truncated: boolean;
}

export interface RunTree {
  root: RunTreeNode;
  run_count: number;
  truncated: boolean;
  truncated_by: TreeLimitName[];
  limits: { max_depth: number; max_children: number; max_runs: number };
}

export interface TreeOptions {
  limits?: Partial<TreeLimits>;
  /** payload bytes inlined per run; default 8 MiB */
  maxResolveBytes?: number;
  /** reconstructed content held for the whole tree */
  maxTreeBytes?: number;
  deadline?: Deadline;
}

interface Pending {
  facts: RunFacts;
  depth: number;
  parent: Pending | null;
  node?: RunTreeNode;
  childrenTruncated: boolean;
  children: Pending[];
}

/** The tree under `run`, or undefined when the tenant has no such run. */
export async function buildRunTree(
  deps: TapeDeps,
  tenant: string,
  run: string,
  options: TreeOptions = {},
): Promise<RunTree | undefined> {
  const limits = { ...DEFAULT_TREE_LIMITS, ...options.limits };
  const deadline = options.deadline;
  const race = <T>(p: Promise<T>, stage: string) => (deadline ? deadline.race(p, stage) : p);
  const rootFacts = (
    await race(readRunFacts(deps.db, tenant, [run], { signal: deadline?.signal }), 'reading the run')
  ).get(run);
  if (!rootFacts) return undefined;

  // 1. The shape: breadth first, level by level, within the limits.
  const root: Pending = { facts: rootFacts, depth: 0, parent: null, childrenTruncated: false, children: [] };
  const order: Pending[] = [root];
  const seen = new Set([run]);
  const hit = new Set<TreeLimitName>();
  let level: Pending[] = [root];
  while (level.length) {
    const atDepthLimit = level[0].depth >= limits.maxDepth;
    // At the depth limit only ask whether children exist.
    const rows = await race(
      readChildRuns(
        deps.db,
        tenant,
        level.map((p) => p.facts.run),
        atDepthLimit ? 1 : limits.maxChildren + 1,
        { signal: deadline?.signal },
      ),
      'reading child runs',
    );
    const byParent = new Map<string, string[]>();
    for (const r of rows) byParent.set(r.parent_run, [...(byParent.get(r.parent_run) ?? []), r.run]);
    const wanted = atDepthLimit ? [] : rows.map((r) => r.run).filter((r) => !seen.has(r));
    const facts = await race(readRunFacts(deps.db, tenant, wanted, { signal: deadline?.signal }), 'reading child runs');
    const next: Pending[] = [];
    for (const parent of level) {
      const kids = (byParent.get(parent.facts.run) ?? []).filter((r) => !seen.has(r));
      if (atDepthLimit) {
        if (kids.length) {
          parent.childrenTruncated = true;
          hit.add('depth');
        }
        continue;
      }
      if (kids.length > limits.maxChildren) {
        parent.childrenTruncated = true;
        hit.add('children');
      }
      for (const kid of kids.slice(0, limits.maxChildren)) {
        const f = facts.get(kid);
        if (!f || seen.has(kid)) continue;
        if (order.length >= limits.maxRuns) {
          parent.childrenTruncated = true;
          hit.add('runs');
          break;
        }
        seen.add(kid);
        const child: Pending = { facts: f, depth: parent.depth + 1, parent, childrenTruncated: false, children: [] };
        parent.children.push(child);
        order.push(child);
        next.push(child);
      }
    }
    level = next;
  }

  // 2. Each run reconstructed, in the same breadth-first order, within the content budget.
  let budget = options.maxTreeBytes ?? DEFAULT_MAX_TREE_BYTES;
  const perRun = options.maxResolveBytes ?? 8 * 1024 * 1024;
  for (const p of order) {
    deadline?.check('reconstructing runs');
    const maxResolveBytes = Math.max(0, Math.min(perRun, budget));
    const rec = await race(
      reconstructStoredRun(deps, tenant, p.facts.run, { facts: p.facts, maxResolveBytes, signal: deadline?.signal }),
      'reconstructing runs',
    );
    if (!rec) continue; // erased since the shape was read
    if (rec.status === 'truncated' && maxResolveBytes < perRun) hit.add('content');
    budget -= renderJson([rec.input, rec.output, rec.tool_calls]).length;
    p.node = { ...rec, depth: p.depth, children: [], children_truncated: p.childrenTruncated };
  }
  for (const p of order) {
    if (!p.node) continue;
    p.node.children = p.children.flatMap((c) => (c.node ? [c.node] : []));
  }
  if (!root.node) return undefined;
  return {
    root: root.node,
    run_count: order.filter((p) => p.node).length,
    truncated: hit.size > 0,
    truncated_by: [...hit].sort(),
    limits: { max_depth: limits.maxDepth, max_children: limits.maxChildren, max_runs: limits.maxRuns },
  };
}
