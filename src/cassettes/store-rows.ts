/**
 * @module cassettes/store-rows
 * What export reads from the store beside the tape: the runs of a tree, a run's spans
 * reduced to span lines (with the recorded time to first chunk of its model calls), and,
 * for --with-spans, its spans whole.
 */
import type { SpanRecord } from '../spans/span-record.js';
import type { Queryable } from '../store/database.js';
import { readChildRuns } from '../tapes/child-runs.js';
import { rowToSpanRecord, spanSelectList } from '../tapes/span-rows.js';
import type { SpanLine } from './run-files.js';

/** GenAI semantic conventions: seconds from the request to the first streamed chunk. */
const FIRST_CHUNK_ATTRIBUTE = 'gen_ai.response.time_to_first_chunk';

/** The root and every run below it, breadth first, each with its parent; null past maxRuns. */
export async function readTreeRuns(
  db: Queryable,
  tenant: string,
  root: string,
  maxRuns: number,
): Promise<{ run: string; parent: string | null }[] | null> {
  const out: { run: string; parent: string | null }[] = [{ run: root, parent: null }];
  const seen = new Set([root]);
  let level = [root];
  while (level.length > 0) {
    // every child of the level: past maxRuns in all, the answer is null anyway
    const rows = await readChildRuns(db, tenant, level, maxRuns + 1);
    level = [];
    for (const r of rows) {
      if (seen.has(r.run)) continue;
      seen.add(r.run);
      out.push({ run: r.run, parent: r.parent_run });
      level.push(r.run);
      if (out.length > maxRuns) return null;
    }
  }
  return out;
}

export interface RunSpans {
  lines: SpanLine[];
  parentRun: string | null;
  /** by span id */
  firstChunkNs: Map<string, bigint>;
}

export async function readSpanLines(db: Queryable, tenant: string, run: string, maxSpans: number): Promise<RunSpans> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT encode(trace_id, 'hex') AS trace_id, encode(span_id, 'hex') AS span_id,
            encode(parent_span_id, 'hex') AS parent_span_id, name, kind, start_ns, end_ns,
            status_code, service_name, parent_run, attributes ->> $4 AS first_chunk_s
       FROM tapedeck_store.spans
      WHERE tenant = $1 AND run_id = $2
      ORDER BY start_ns, span_id
      LIMIT $3`,
    [tenant, run, maxSpans, FIRST_CHUNK_ATTRIBUTE],
  );
  const firstChunkNs = new Map<string, bigint>();
  let parentRun: string | null = null;
  const lines = rows.map((r): SpanLine => {
    parentRun ??= (r.parent_run as string | null) ?? null;
    const seconds = Number(r.first_chunk_s);
    if (r.first_chunk_s !== null && Number.isFinite(seconds) && seconds >= 0)
      firstChunkNs.set(r.span_id as string, BigInt(Math.round(seconds * 1e9)));
    return {
      trace_id: r.trace_id as string,
      span_id: r.span_id as string,
      parent_span_id: (r.parent_span_id as string | null) ?? null,
      name: r.name as string,
      kind: r.kind as string,
      start_ns: BigInt(r.start_ns as bigint),
      end_ns: BigInt(r.end_ns as bigint),
      status: r.status_code as string,
      service: (r.service_name as string | null) ?? null,
    };
  });
  return { lines, parentRun, firstChunkNs };
}

export async function readRawSpans(
  db: Queryable,
  tenant: string,
  run: string,
  maxSpans: number,
): Promise<SpanRecord[]> {
  const rows = await db.query<Record<string, unknown>>(
    `SELECT ${spanSelectList} FROM tapedeck_store.spans WHERE tenant = $1 AND run_id = $2 ORDER BY start_ns, span_id LIMIT $3`,
    [tenant, run, maxSpans],
  );
  return rows.map(rowToSpanRecord);
}
