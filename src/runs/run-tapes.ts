/**
 * @module runs/run-tapes
 * The tapes of several runs in two queries (their spans, their steps), for reads that touch
 * many runs: export pages and tree nodes. Same tape as tapes/tape-service.ts readTape: the
 * first maxSpans spans of each run in start order (truncated past them), the steps among
 * them, assembled by tapes/assemble-run.ts, payload references inlined within a budget per
 * run. test/integration/runs-facts.test.ts pins that both give the same tapes.
 *
 * It reads the tables with the tenant as stored, so the (tenant, run_id) index serves it;
 * the tapedeck.tape_steps view's `tenant IS NOT DISTINCT FROM` cannot use it (160 ms per run
 * at 100k runs on PostgreSQL 15, against well under 1 ms here).
 */
import type { JsonValue, StepStatus, Tape } from '../normalize/step.js';
import { createPayloadResolver } from '../payloads/resolve-payloads.js';
import { assembleTape } from '../tapes/assemble-run.js';
import { DEFAULT_MAX_TAPE_SPANS, type RunRows, type SpanLink } from '../tapes/tape-reader.js';
import { tokensOf, type StepViewRow } from '../tapes/step-rows.js';
import type { ReadTapeOptions, TapeDeps } from '../tapes/tape-service.js';

const DEFAULT_MAX_RESOLVE_BYTES = 8 * 1024 * 1024;

interface SpanRow { run: string; trace_id: string; span_id: string; parent_span_id: string | null; start_ns: bigint; end_ns: bigint }

/** Tapes of the runs that exist, by run id. */
export async function readTapes(deps: TapeDeps, tenant: string, runs: readonly string[], options: ReadTapeOptions = {}): Promise<Map<string, Tape>> {
  const out = new Map<string, Tape>();
  if (runs.length === 0) return out;
  const maxSpans = options.maxSpans ?? DEFAULT_MAX_TAPE_SPANS;
  const spanRows = await deps.db.query<SpanRow>(
    `SELECT run, encode(trace_id, 'hex') AS trace_id, encode(span_id, 'hex') AS span_id,
            encode(parent_span_id, 'hex') AS parent_span_id, start_ns, end_ns
       FROM (SELECT run_id AS run, trace_id, span_id, parent_span_id, start_ns, end_ns,
                    row_number() OVER (PARTITION BY run_id ORDER BY start_ns, span_id) AS position
               FROM tapedeck_store.spans
              WHERE tenant = $1 AND run_id = ANY($2::text[])) s
      WHERE position <= $3
      ORDER BY run, start_ns, span_id`,
    [tenant, runs, maxSpans + 1],
  );
  options.signal?.throwIfAborted();
  const stepRows = await deps.db.query<StepViewRow>(
    `SELECT s.run_id AS run, encode(st.trace_id, 'hex') AS trace_id, encode(st.span_id, 'hex') AS span_id,
            encode(s.parent_span_id, 'hex') AS parent_span_id,
            st.kind, st.name, st.model, st.tool, st.tool_call_id, s.service_name AS service,
            s.start_ns, s.end_ns - s.start_ns AS duration_ns, st.status,
            st.request, st.response, st.request_digest, st.response_digest, st.fingerprint,
            st.tokens_input, st.tokens_output, st.tokens_cache_read, st.tokens_cache_write, st.tokens_context,
            st.params, st.layout, st.cost_usd
       FROM tapedeck_store.steps st
       JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id)
      WHERE st.tenant = $1 AND s.run_id = ANY($2::text[])
      ORDER BY s.run_id, s.start_ns, st.span_id`,
    [tenant, runs],
  );
  const rowsByRun = new Map<string, RunRows>();
  for (const r of spanRows) {
    let rows = rowsByRun.get(r.run);
    if (!rows) rowsByRun.set(r.run, (rows = { tenant: tenant || null, spansExamined: 0, truncated: false, spans: [], steps: [] }));
    if (rows.spans.length === maxSpans) { rows.truncated = true; continue; }
    rows.spans.push({ trace_id: r.trace_id, span_id: r.span_id, parent_span_id: r.parent_span_id, start_ns: BigInt(r.start_ns), end_ns: BigInt(r.end_ns) });
    rows.spansExamined = rows.spans.length;
  }
  for (const r of stepRows) {
    const rows = rowsByRun.get(r.run);
    const last = rows?.spans[rows.spans.length - 1];
    // The steps among the spans read: the same start order and the same cut.
    if (!rows || !last || !atOrBefore(BigInt(r.start_ns), r.span_id, last)) continue;
    rows.steps.push(toStepRow(r));
  }
  for (const run of runs) {
    const rows = rowsByRun.get(run);
    if (!rows || out.has(run)) continue;
    const tape: Tape = { run, tenant: rows.tenant, spans_examined: rows.spansExamined, truncated: rows.truncated, steps: assembleTape(rows) };
    out.set(run, options.resolve ? await resolveTape(deps, tape, options) : tape);
  }
  return out;
}

/** The tape with payload references inlined within maxResolveBytes (as readTape's resolve=true). */
export async function resolveTape(deps: TapeDeps, tape: Tape, options: Pick<ReadTapeOptions, 'maxResolveBytes' | 'signal'> = {}): Promise<Tape> {
  options.signal?.throwIfAborted();
  const resolver = createPayloadResolver(deps.payloads, { maxBytes: options.maxResolveBytes ?? DEFAULT_MAX_RESOLVE_BYTES, signal: options.signal });
  for (const step of tape.steps) {
    step.request = await resolver.resolve(step.request);
    step.response = await resolver.resolve(step.response);
  }
  tape.resolved_partial = resolver.resolvedPartial;
  return tape;
}

function atOrBefore(startNs: bigint, spanId: string, last: SpanLink): boolean {
  return startNs < last.start_ns || (startNs === last.start_ns && spanId <= last.span_id);
}

function toStepRow(r: StepViewRow): RunRows['steps'][number] {
  return {
    kind: r.kind, name: r.name, model: r.model, tool: r.tool, tool_call_id: r.tool_call_id, service: r.service,
    trace_id: r.trace_id, span_id: r.span_id, parent_span_id: r.parent_span_id,
    start_ns: BigInt(r.start_ns), duration_ns: BigInt(r.duration_ns), status: r.status as StepStatus,
    request: r.request as JsonValue | null, response: r.response as JsonValue | null,
    request_digest: r.request_digest, response_digest: r.response_digest, fingerprint: r.fingerprint,
    tokens: tokensOf(r), params: r.params, layout: r.layout, cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
  };
}
