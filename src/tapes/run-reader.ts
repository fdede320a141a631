/**
 * @module tapes/run-reader
 * Runs, newest first (by the end of their last span), summarised by the tapedeck.runs view,
 * paged with an opaque cursor that names the last run of the previous page.
 */
import { isStorable } from '../spans/storable-text.js';
import type { Queryable } from '../store/database.js';
import { ACTIVE_WINDOW_NS, type RunOutcome } from './run-outcome.js';

export interface RunSummary {
  run: string;
  tenant: string | null;
  parent_run: string | null;
  spans: number;
  steps: number;
  llm_steps: number;
  tool_steps: number;
  agent_steps: number;
  errors: number;
  tokens: { input: number | null; output: number | null; cache_read: number | null; cache_write: number | null };
  metered_cost_usd: number | null;
  first_start_ns: bigint;
  last_end_ns: bigint;
  duration_ns: bigint;
  service: string | null;
  outcome: RunOutcome;
}

export interface RunPage {
  runs: RunSummary[];
  next_cursor: string | null;
}

export class InvalidCursorError extends Error {}

const INT64_MAX = 2n ** 63n - 1n;

const runColumns = `tenant, run, parent_run, spans, steps, llm_steps, tool_steps, agent_steps, errors,
  tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, metered_cost_usd,
  first_start_ns, last_end_ns, duration_ns, service, outcome`;

const SUMMARIES_AT_ONCE = 4;

export async function listRuns(
  db: Queryable,
  tenant: string,
  options: { limit: number; cursor?: string; outcome?: RunOutcome; nowNs?: bigint },
): Promise<RunPage> {
  const params: unknown[] = [tenant, options.limit + 1];
  let after = '';
  if (options.cursor) {
    const { lastEndNs, run } = decodeCursor(options.cursor);
    params.push(lastEndNs.toString(), run);
    after = `AND (s.end_ns, s.run_id) < ($${params.length - 1}::bigint, $${params.length}::text)`;
  }
  // The view's rule (run-outcome.ts), applied to each run's last-ending span as the walk
  // meets it: the time test first, as a plain comparison, and run_failed only for runs old
  // enough to have ended (calling run_outcome per span cost a query plan each time).
  let outcome = '';
  if (options.outcome) {
    params.push(((options.nowNs ?? BigInt(Date.now()) * 1_000_000n) - ACTIVE_WINDOW_NS).toString());
    const ended = `s.end_ns <= $${params.length}::bigint`;
    const failed = 'tapedeck_store.run_failed(s.tenant, s.run_id, s.end_ns)';
    outcome = {
      unknown: `AND NOT (${ended})`,
      failure: `AND ${ended} AND ${failed}`,
      success: `AND ${ended} AND NOT ${failed}`,
    }[options.outcome];
  }
  // Each run once, by the span that ends it last (ties: the greatest trace and span id), in
  // the order of the tapedeck.runs view's last_end_ns DESC, run DESC: spans_end_idx walked
  // newest first, a span kept when no span of its run ends after it. A page reads about
  // (page size x spans per run) index entries, not the whole store as the view's ORDER BY
  // over its aggregate does.
  const newest = await db.query<{ run: string }>(
    `SELECT s.run_id AS run FROM tapedeck_store.spans s
      WHERE s.tenant = $1 AND s.run_id IS NOT NULL ${after}
        AND NOT EXISTS (
          SELECT 1 FROM tapedeck_store.spans l
           WHERE l.tenant = s.tenant AND l.run_id = s.run_id
             AND (l.end_ns, l.trace_id, l.span_id) > (s.end_ns, s.trace_id, s.span_id))
        ${outcome}
      ORDER BY s.end_ns DESC, s.run_id DESC
      LIMIT $2`,
    params,
  );
  // Summaries run by run, a few at once: the view is fast for `run = $2` (the filter reaches
  // both of its aggregates) and slow for a list of runs (it does not).
  const runs = newest.slice(0, options.limit).map((r) => r.run);
  const summaries: (RunSummary | undefined)[] = [];
  for (let i = 0; i < runs.length; i += SUMMARIES_AT_ONCE) {
    summaries.push(...(await Promise.all(runs.slice(i, i + SUMMARIES_AT_ONCE).map((run) => getRun(db, tenant, run)))));
  }
  // undefined: gone since the walk (a concurrent reindex moved its spans)
  const page = summaries.filter((s): s is RunSummary => s !== undefined);
  const last = page[page.length - 1];
  return {
    runs: page,
    next_cursor: newest.length > options.limit && last ? encodeCursor(last.last_end_ns, last.run) : null,
  };
}

export async function getRun(
  db: Queryable,
  tenant: string,
  run: string,
  options: { signal?: AbortSignal } = {},
): Promise<RunSummary | undefined> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT ${runColumns} FROM tapedeck.runs WHERE tenant_key = $1 AND run = $2`,
    [tenant, run],
    { signal: options.signal },
  );
  return rows[0] ? toSummary(rows[0]) : undefined;
}

function toSummary(r: Record<string, unknown>): RunSummary {
  const n = (v: unknown) => (v === null || v === undefined ? null : Number(v));
  return {
    run: r.run as string,
    tenant: (r.tenant as string | null) ?? null,
    parent_run: (r.parent_run as string | null) ?? null,
    spans: Number(r.spans),
    steps: Number(r.steps),
    llm_steps: Number(r.llm_steps),
    tool_steps: Number(r.tool_steps),
    agent_steps: Number(r.agent_steps),
    errors: Number(r.errors),
    tokens: {
      input: n(r.tokens_input),
      output: n(r.tokens_output),
      cache_read: n(r.tokens_cache_read),
      cache_write: n(r.tokens_cache_write),
    },
    metered_cost_usd: n(r.metered_cost_usd),
    first_start_ns: BigInt(r.first_start_ns as bigint),
    last_end_ns: BigInt(r.last_end_ns as bigint),
    duration_ns: BigInt(r.duration_ns as bigint),
    service: (r.service as string | null) ?? null,
    outcome: r.outcome as RunSummary['outcome'],
  };
}

function encodeCursor(lastEndNs: bigint, run: string): string {
  return Buffer.from(JSON.stringify([lastEndNs.toString(), run])).toString('base64url');
}

function decodeCursor(cursor: string): { lastEndNs: bigint; run: string } {
  try {
    const [end, run] = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as [string, string];
    // Issued cursors hold a stored run id and a signed 64-bit time; anything else is forged.
    if (typeof run !== 'string' || !isStorable(run) || !/^\d{1,19}$/.test(end) || BigInt(end) > INT64_MAX)
      throw new Error('shape');
    return { lastEndNs: BigInt(end), run };
  } catch {
    throw new InvalidCursorError(`cursor ${JSON.stringify(cursor)} is not one this server issued`);
  }
}
