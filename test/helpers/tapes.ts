/**
 * Test helper: the pure pipeline over a set of records — normalize every span with its log
 * records, finish the steps, group spans into runs and assemble each run's tape — so tests
 * exercise exactly what ingest + the tape reader compose (minus storage and offload).
 */
import type { LogRecord, SpanRecord } from '../../src/spans/span-record.js';
import type { Step } from '../../src/normalize/step.js';
import { normalizeSpan } from '../../src/normalize/normalize.js';
import { finishStep, toStepRow, type StepRow } from '../../src/normalize/finish.js';
import { resolveRunsInMemory } from '../../src/tapes/run-resolution.js';
import { assembleTape } from '../../src/tapes/assemble.js';
import { spanKey, type SpanLinkRow } from '../../src/tapes/span-tree.js';

export function logsBySpan(logs: readonly LogRecord[]): Map<string, LogRecord[]> {
  const out = new Map<string, LogRecord[]>();
  for (const l of logs) {
    if (!l.traceId || !l.spanId) continue;
    const k = spanKey(l.traceId, l.spanId);
    const list = out.get(k);
    if (list) list.push(l);
    else out.set(k, [l]);
  }
  return out;
}

export interface RunTape {
  run: string;
  parentRun: string | null;
  steps: Step[];
  firstStart: bigint;
}

/** Every run's tape, ordered by the run's first step start. Spans may come in any order. */
export function tapesOf(spans: readonly SpanRecord[], logs: readonly LogRecord[] = []): RunTape[] {
  const logsOf = logsBySpan(logs);
  const facts = spans.map((s) => ({
    span: s,
    facts: normalizeSpan(s, logsOf.get(spanKey(s.traceId, s.spanId)) ?? []),
  }));
  // The rule ingest applies (and SQL, where this answers 'ambiguous')
  const runsOf = resolveRunsInMemory(
    facts.map(({ span, facts: f }) => ({
      traceId: span.traceId,
      spanId: span.spanId,
      parentSpanId: span.parentSpanId,
      ownRun: f.ownRun,
      ownParentRun: f.parentRun,
      runId: null,
      parentRun: null,
    })),
  );
  if (runsOf === 'ambiguous')
    throw new Error('tapesOf: a run with two different parent runs; store the spans and read the tapes instead');
  const byRun = new Map<string, { steps: StepRow[]; spans: SpanLinkRow[]; parentRun: string | null }>();
  for (const { span, facts: f } of facts) {
    const { runId, parentRun } = runsOf.get(spanKey(span.traceId, span.spanId))!;
    const run = runId as string;
    let entry = byRun.get(run);
    if (!entry) byRun.set(run, (entry = { steps: [], spans: [], parentRun }));
    entry.spans.push({ trace_id: span.traceId, span_id: span.spanId, parent_span_id: span.parentSpanId });
    if (f.step) entry.steps.push(toStepRow(span, finishStep(f.step)));
  }
  const tapes: RunTape[] = [];
  for (const [run, entry] of byRun) {
    const steps = assembleTape(entry);
    if (!steps.length) continue;
    tapes.push({ run, parentRun: entry.parentRun, steps, firstStart: steps[0].start_ns });
  }
  return tapes.sort((a, b) =>
    a.firstStart < b.firstStart ? -1 : a.firstStart > b.firstStart ? 1 : a.run.localeCompare(b.run),
  );
}
