/**
 * @module tapes/run-groups
 * Run identity over a set of spans, in memory — the same rule the store's SQL applies
 * (tapes/resolve-runs.ts), for tests, the in-process exporter and tools that hold spans:
 * a span's run is the run it names (SpanFacts.ownRun), else its nearest ancestor's, else
 * `trace:<trace_id>`, whatever order the spans arrived in. A span naming a run other than
 * its parent span's starts a child run whose parent run is the parent span's run, unless a
 * span of the child run named its parent run explicitly (SpanFacts.parentRun).
 */
import { traceRun } from '../normalize/run-identity.js';
import { spanKey } from './span-tree.js';

export interface RunSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  ownRun: string | null;
  parentRun: string | null;
}

export interface RunGroups {
  /** run of each span, keyed `${traceId}/${spanId}` */
  runOf: Map<string, string>;
  /** parent run of each run that has one */
  parentRunOf: Map<string, string>;
}

export function groupRuns(spans: readonly RunSpan[]): RunGroups {
  const byKey = new Map(spans.map((s) => [spanKey(s.traceId, s.spanId), s]));
  const runOf = new Map<string, string>();
  const resolve = (s: RunSpan): string => {
    const key = spanKey(s.traceId, s.spanId);
    const known = runOf.get(key);
    if (known) return known;
    // Walk up to the nearest span with a run (iteratively; a cycle ends the walk).
    const path: string[] = [key];
    const seen = new Set(path);
    let run: string | undefined = s.ownRun ?? undefined;
    let cur = s;
    while (run === undefined) {
      const parent = cur.parentSpanId ? byKey.get(spanKey(cur.traceId, cur.parentSpanId)) : undefined;
      if (!parent) break;
      const pk = spanKey(parent.traceId, parent.spanId);
      if (seen.has(pk)) break;
      run = runOf.get(pk) ?? parent.ownRun ?? undefined;
      path.push(pk);
      seen.add(pk);
      cur = parent;
    }
    const resolved = run ?? traceRun(s.traceId);
    for (const k of path) if (!runOf.has(k)) runOf.set(k, byKey.get(k)?.ownRun ?? resolved);
    return runOf.get(key) as string;
  };
  for (const s of spans) resolve(s);

  const parentRunOf = new Map<string, string>();
  for (const s of spans) {
    const run = runOf.get(spanKey(s.traceId, s.spanId)) as string;
    if (s.parentRun && s.parentRun !== run) { parentRunOf.set(run, s.parentRun); continue; }
    if (parentRunOf.has(run) || !s.ownRun || !s.parentSpanId) continue;
    const parentRun = runOf.get(spanKey(s.traceId, s.parentSpanId));
    if (parentRun && parentRun !== run) parentRunOf.set(run, parentRun);
  }
  return { runOf, parentRunOf };
}
