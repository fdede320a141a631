/**
 * @module tapes/tape-reader
 * Reads runs' stored steps (and the span tree around them) in start order: for each run the
 * first maxSpans spans, saying truncated past them, and the steps among those spans. Several
 * runs are read in two queries (export pages, tree levels, recall); one run is the same read.
 * The tables are queried with the tenant as stored, so the (tenant, run_id, start_ns) index
 * serves every read. Ordering ties and duplicate model spans are settled by assemble (pure).
 *
 * `bodies: 'outline'` reads a step's request and response cut down, in SQL, to what ordering
 * and duplicate folding look at (step-order.ts, collapse-duplicates.ts): a model call's
 * request keeps only its tool-result messages' ids, its response only the tool calls it asked
 * for; a tool step keeps its arguments; the rest is left out, a recorded value standing as an
 * empty list so that whether one was recorded still reads. The tape assembles in the same
 * order, without holding its prompts and answers: for callers that summarize a run.
 */
import type { Queryable } from '../store/database.js';
import type { StepStatus } from '../normalize/step.js';
import type { StepRow } from '../normalize/finish.js';
import { storedJson } from '../json/json-value.js';
import { stepRequestSql, stepResponseSql, tokensOf, type StepViewRow } from './step-rows.js';

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

interface SpanRow extends SpanLink {
  run: string;
}

/** The rows of each run that exists, by run id. */
export async function readRunsRows(
  db: Queryable,
  tenant: string,
  runs: readonly string[],
  options: { maxSpans: number; signal?: AbortSignal; bodies?: 'stored' | 'outline' },
): Promise<Map<string, RunRows>> {
  const byRun = new Map<string, RunRows>();
  if (runs.length === 0) return byRun;
  const spanRows = await db.query<SpanRow>(
    `SELECT run, encode(trace_id, 'hex') AS trace_id, encode(span_id, 'hex') AS span_id,
            encode(parent_span_id, 'hex') AS parent_span_id, start_ns, end_ns
       FROM (SELECT run_id AS run, trace_id, span_id, parent_span_id, start_ns, end_ns,
                    row_number() OVER (PARTITION BY run_id ORDER BY start_ns, span_id) AS position
               FROM tapedeck_store.spans
              WHERE tenant = $1 AND run_id = ANY($2::text[])) s
      WHERE position <= $3
      ORDER BY run, start_ns, span_id`,
    [tenant, runs, options.maxSpans + 1],
    { signal: options.signal },
  );
  options.signal?.throwIfAborted();
  for (const r of spanRows) {
    let rows = byRun.get(r.run);
    if (!rows) {
      rows = { tenant: tenant || null, spansExamined: 0, truncated: false, spans: [], steps: [] };
      byRun.set(r.run, rows);
    }
    if (rows.spans.length === options.maxSpans) {
      rows.truncated = true;
      continue;
    }
    rows.spans.push({
      trace_id: r.trace_id,
      span_id: r.span_id,
      parent_span_id: r.parent_span_id,
      start_ns: BigInt(r.start_ns),
      end_ns: BigInt(r.end_ns),
    });
    rows.spansExamined = rows.spans.length;
  }
  if (byRun.size === 0) return byRun;
  const stepRows = await db.query<StepViewRow>(
    `SELECT s.run_id AS run, encode(st.trace_id, 'hex') AS trace_id, encode(st.span_id, 'hex') AS span_id,
            encode(s.parent_span_id, 'hex') AS parent_span_id,
            st.kind, st.name, st.model, st.tool, st.tool_call_id, s.service_name AS service,
            s.start_ns, s.end_ns - s.start_ns AS duration_ns, st.status,
            ${options.bodies === 'outline' ? OUTLINE_BODIES : `${stepRequestSql} AS request, ${stepResponseSql} AS response`}, st.request_digest, st.response_digest, st.fingerprint,
            st.tokens_input, st.tokens_output, st.tokens_cache_read, st.tokens_cache_write, st.tokens_context,
            st.params, st.layout, st.cost_usd
       FROM tapedeck_store.steps st
       JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id)
      WHERE st.tenant = $1 AND s.run_id = ANY($2::text[])
      ORDER BY s.run_id, s.start_ns, st.span_id`,
    [tenant, [...byRun.keys()]],
    { signal: options.signal },
  );
  options.signal?.throwIfAborted();
  for (const r of stepRows) {
    const rows = byRun.get(r.run);
    const last = rows?.spans[rows.spans.length - 1];
    // The steps among the spans read: the same start order and the same cut.
    if (!rows || !last || !atOrBefore(BigInt(r.start_ns), r.span_id, last)) continue;
    rows.steps.push(toStepRow(r));
  }
  return byRun;
}

/** The request and response columns of an outline read (module comment); stored as JSON text. */
const OUTLINE_BODIES = `CASE
         WHEN (st.request IS NULL AND st.request_messages IS NULL) OR st.kind = 'agent' THEN NULL
         WHEN st.kind = 'tool' THEN st.request
         WHEN json_typeof((${stepRequestSql})::json) <> 'array' THEN '[]'
         ELSE COALESCE((SELECT json_agg(json_build_object('role', 'tool', 'tool_call_id', m -> 'tool_call_id'))
                          FROM json_array_elements((${stepRequestSql})::json) AS m
                         WHERE json_typeof(m) = 'object' AND m ->> 'role' = 'tool'
                           AND json_typeof(m -> 'tool_call_id') = 'string')::text, '[]')
       END AS request,
       CASE
         WHEN (st.response IS NULL AND st.response_messages IS NULL) OR st.kind <> 'llm' THEN NULL
         WHEN json_typeof((${stepResponseSql})::json) <> 'array' THEN '[]'
         ELSE COALESCE((SELECT json_agg(json_build_object('tool_calls', m -> 'tool_calls'))
                          FROM json_array_elements((${stepResponseSql})::json) AS m
                         WHERE json_typeof(m) = 'object' AND json_typeof(m -> 'tool_calls') = 'array')::text, '[]')
       END AS response`;

function atOrBefore(startNs: bigint, spanId: string, last: SpanLink): boolean {
  return startNs < last.start_ns || (startNs === last.start_ns && spanId <= last.span_id);
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
    request: storedJson(r.request),
    response: storedJson(r.response),
    request_digest: r.request_digest,
    response_digest: r.response_digest,
    fingerprint: r.fingerprint,
    tokens: tokensOf(r),
    params: r.params,
    layout: r.layout,
    cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
  };
}
