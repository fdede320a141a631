/**
 * @module recall/query
 * Recall's SQL, the same on PGlite and PostgreSQL. Words are lexemes computed by tokenize.ts
 * and stored as they are, so a query is a tsquery of quoted lexemes cast with ::tsquery — no
 * parser and no dictionary on either side, whatever the server's locale.
 *
 * A matching span is a step whose own lexemes (steps.search) hold every lexeme of the query.
 * The index is by trace (tapedeck_store.trace_words, 0004_recall_by_trace.sql): the traces
 * whose words hold the query are the candidates, and their steps are tested one by one.
 * "Newest" is by the end of the span, ties by trace and span id (descending), so pages are
 * stable.
 */
import type { JsonValue } from '../normalize/step.js';
import type { Queryable } from '../store/database.js';
import type { RunFacts } from './rank.js';
import type { RecordedStep } from './recorded-text.js';
import { termLexemes, type Term } from './tokenize.js';

/** `'weather' & 'paris'`: every lexeme of every term, quoted (quotes doubled, backslashes escaped). */
export function tsqueryOf(terms: readonly Term[]): string {
  const lexemes = [...new Set(terms.flatMap(termLexemes))];
  return lexemes.map((l) => `'${l.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`).join(' & ');
}

/**
 * The step `st` is in a trace whose words hold the query ($1 tenant, $2 tsquery). As an array
 * of trace ids the candidates are looked up through steps' primary key (tenant, trace_id, ...)
 * whatever the planner estimates; as `IN (subquery)` it chose to test every stored step
 * against the query once the candidates looked many (measured in bench/recall.mjs).
 */
const IN_CANDIDATE_TRACES = `st.trace_id = ANY(ARRAY(
         SELECT w.trace_id FROM tapedeck_store.trace_words w WHERE w.tenant = $1 AND w.words @@ $2::tsquery))`;

/**
 * At least the number of matching steps, from the index alone: the steps counted in the rows
 * of the candidate traces (trace_words.steps).
 */
export async function candidateStepBound(db: Queryable, tenant: string, tsquery: string): Promise<number> {
  const [row] = await db.query<{ n: bigint | number | null }>(
    'SELECT sum(steps) AS n FROM tapedeck_store.trace_words WHERE tenant = $1 AND words @@ $2::tsquery',
    [tenant, tsquery],
  );
  return Number(row.n ?? 0);
}

/** Matching steps, counted up to `cap` (the scan stops there). */
export async function countMatches(db: Queryable, tenant: string, tsquery: string, cap: number): Promise<number> {
  const [row] = await db.query<{ n: bigint | number }>(
    `SELECT count(*) AS n FROM (
       SELECT 1 FROM tapedeck_store.steps st
        WHERE st.tenant = $1 AND st.search @@ $2::tsquery AND ${IN_CANDIDATE_TRACES}
        LIMIT $3) m`,
    [tenant, tsquery, cap],
  );
  return Number(row.n);
}

export interface MatchRow {
  run: string;
  end_ns: bigint;
  trace_id: string;
  span_id: string;
}

/** The newest matching spans that belong to a run, after `after` when given (keyset paging). */
export async function newestMatches(
  db: Queryable,
  tenant: string,
  tsquery: string,
  limit: number,
  after: MatchRow | null = null,
): Promise<MatchRow[]> {
  const params: unknown[] = [tenant, tsquery, limit];
  let page = '';
  if (after) {
    params.push(after.end_ns.toString(), after.trace_id, after.span_id);
    page = `AND (s.end_ns, st.trace_id, st.span_id) < ($4::bigint, decode($5, 'hex'), decode($6, 'hex'))`;
  }
  const rows = await db.query<MatchRow>(
    `SELECT s.run_id AS run, s.end_ns, encode(st.trace_id, 'hex') AS trace_id, encode(st.span_id, 'hex') AS span_id
       FROM tapedeck_store.steps st
       JOIN tapedeck_store.spans s ON s.tenant = st.tenant AND s.trace_id = st.trace_id AND s.span_id = st.span_id
      WHERE st.tenant = $1 AND st.search @@ $2::tsquery AND ${IN_CANDIDATE_TRACES} AND s.run_id IS NOT NULL ${page}
      ORDER BY s.end_ns DESC, st.trace_id DESC, st.span_id DESC
      LIMIT $3`,
    params,
  );
  return rows.map((r) => ({ ...r, end_ns: BigInt(r.end_ns) }));
}

/** The recorded parts of some steps (stored form: payload references unresolved). */
export async function readStepTexts(
  db: Queryable,
  tenant: string,
  keys: readonly { trace_id: string; span_id: string }[],
): Promise<Map<string, RecordedStep>> {
  const rows = await db.query<{ trace_id: string; span_id: string } & RecordedStep>(
    `SELECT encode(st.trace_id, 'hex') AS trace_id, encode(st.span_id, 'hex') AS span_id, st.name, st.tool, st.request, st.response
       FROM tapedeck_store.steps st
       JOIN unnest($2::text[], $3::text[]) AS k(trace_id, span_id)
         ON st.trace_id = decode(k.trace_id, 'hex') AND st.span_id = decode(k.span_id, 'hex')
      WHERE st.tenant = $1`,
    [tenant, keys.map((k) => k.trace_id), keys.map((k) => k.span_id)],
  );
  const out = new Map<string, RecordedStep>();
  for (const r of rows) {
    out.set(`${r.trace_id}/${r.span_id}`, {
      name: r.name,
      tool: r.tool,
      request: r.request as JsonValue | null,
      response: r.response as JsonValue | null,
    });
  }
  return out;
}

/**
 * Each run's last span end, over all its spans, and whether it failed by the `runs` view's
 * rule: a span with status error that starts the run (no parent inside the run) or that
 * ended last.
 */
export async function readRunFacts(db: Queryable, tenant: string, runs: readonly string[]): Promise<Map<string, RunFacts>> {
  if (runs.length === 0) return new Map();
  const rows = await db.query<{ run: string; last_end_ns: bigint; failed: boolean }>(
    `WITH wanted AS (SELECT DISTINCT unnest($2::text[]) AS run_id),
     last AS (
       SELECT s.run_id, max(s.end_ns) AS last_end_ns
         FROM tapedeck_store.spans s JOIN wanted w ON s.run_id = w.run_id
        WHERE s.tenant = $1
        GROUP BY s.run_id)
     SELECT l.run_id AS run, l.last_end_ns,
            EXISTS (
              SELECT 1 FROM tapedeck_store.spans s
               WHERE s.tenant = $1 AND s.run_id = l.run_id AND s.status_code = 'error'
                 AND (s.end_ns = l.last_end_ns
                      OR s.parent_span_id IS NULL
                      OR NOT EXISTS (SELECT 1 FROM tapedeck_store.spans p
                                      WHERE p.tenant = s.tenant AND p.trace_id = s.trace_id
                                        AND p.span_id = s.parent_span_id AND p.run_id = s.run_id))
            ) AS failed
       FROM last l`,
    [tenant, runs],
  );
  return new Map(rows.map((r) => [r.run, { lastEndNs: BigInt(r.last_end_ns), failed: r.failed === true }]));
}
