/**
 * @module tapes/tape-reader
 * Reads one run's stored steps (and the span tree around them) in start order, at most
 * maxSpans spans, saying truncated past them. Ordering ties and duplicate model spans are
 * settled by assemble (pure); payload references are resolved by the caller on request.
 */
import type { Queryable } from '../store/database.js';
import type { JsonValue, StepStatus } from '../normalize/step.js';
import type { StepRow } from '../normalize/finish.js';
import { tokensOf, type StepViewRow } from './step-rows.js';

export interface SpanLink {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  start_ns: bigint;
  end_ns: bigint;
}

export interface RunRows {
  tenant: string | null;
  spansExamined: number;
  truncated: boolean;
  /** every span read (steps and context), for causality between steps */
  spans: SpanLink[];
  steps: StepRow[];
}

export const DEFAULT_MAX_TAPE_SPANS = 20_000;

export async function readRunRows(db: Queryable, tenant: string, run: string, options: { maxSpans: number }): Promise<RunRows | undefined> {
  const spanRows = await db.query<{ trace_id: string; span_id: string; parent_span_id: string | null; start_ns: bigint; end_ns: bigint }>(
    `SELECT encode(trace_id, 'hex') AS trace_id, encode(span_id, 'hex') AS span_id,
            encode(parent_span_id, 'hex') AS parent_span_id, start_ns, end_ns
       FROM tapedeck_store.spans
      WHERE tenant = $1 AND run_id = $2
      ORDER BY start_ns, span_id
      LIMIT $3`,
    [tenant, run, options.maxSpans + 1],
  );
  if (spanRows.length === 0) return undefined;
  const truncated = spanRows.length > options.maxSpans;
  const spans = truncated ? spanRows.slice(0, options.maxSpans) : spanRows;
  const last = spans[spans.length - 1];
  // The steps among the spans read: the same start order and the same cut.
  const stepRows = await db.query<StepViewRow>(
    `SELECT * FROM tapedeck.tape_steps
      WHERE tenant IS NOT DISTINCT FROM $1 AND run = $2
        AND (start_ns, span_id) <= ($3::bigint, $4::text)
      ORDER BY start_ns, span_id`,
    [tenant || null, run, last.start_ns.toString(), last.span_id],
  );
  return {
    tenant: tenant || null,
    spansExamined: spans.length,
    truncated,
    spans: spans.map((s) => ({ ...s, start_ns: BigInt(s.start_ns), end_ns: BigInt(s.end_ns) })),
    steps: stepRows.map(toStepRow),
  };
}

function toStepRow(r: StepViewRow): StepRow {
  return {
    kind: r.kind,
    name: r.name,
    model: r.model,
    tool: r.tool,
    tool_call_id: r.tool_call_id,
    service: r.service,
    trace_id: r.trace_id,
    span_id: r.span_id,
    parent_span_id: r.parent_span_id,
    start_ns: BigInt(r.start_ns),
    duration_ns: BigInt(r.duration_ns),
    status: r.status as StepStatus,
    request: r.request as JsonValue | null,
    response: r.response as JsonValue | null,
    request_digest: r.request_digest,
    response_digest: r.response_digest,
    fingerprint: r.fingerprint,
    tokens: tokensOf(r),
    params: r.params,
    layout: r.layout,
    cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
  };
}
