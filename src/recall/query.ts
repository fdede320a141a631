/**
 * @module recall/query
 * Recall's SQL, the same on PGlite and PostgreSQL. Words are hashes of the lexemes tokenize.ts
 * finds (word-hash.ts), so a query is the bigint[] of its lexemes' hashes: no parser and no
 * dictionary on either side, whatever the server's locale.
 *
 * A matching span is a step that holds every word of the query. The index is by rows of
 * steps written together (tapedeck_store.trace_words, recall/trace-words.ts): its GIN index
 * finds the rows holding every word, and in each row the AND of those words' masks says
 * which of its steps hold them all. "Newest" is by the end of the span, ties by trace and span id (descending), so
 * pages are stable.
 */
import type { Queryable, QueryOptions } from '../store/database.js';
import type { RunEnd } from '../tapes/run-outcome.js';
import { type RecordedStep, recordedStepOf, type StepTextRow, stepTextColumns } from './recorded-text.js';
import { termLexemes, type Term } from './tokenize.js';
import { wordHash, wordId } from './word-hash.js';

/** The query's words: each distinct lexeme of its terms, as the bigint of its hash (decimal). */
export function queryWords(terms: readonly Term[]): string[] {
  const lexemes = [...new Set(terms.flatMap(termLexemes))];
  return lexemes.map((l) => wordId(...wordHash(l)));
}

/**
 * The steps holding every word ($1 tenant, $2 words): trace_id and span_id, a step once
 * even where it is in several rows (written again). `m` is the AND of the words' masks in a
 * row; bit b of it is the row's b-th step, whose ids are the b-th of trace_ids and span_ids.
 * A word's mask is at its place in the row's words: in a row of sorted words (`sorted`,
 * migration 0010) found by binary search, width_bucket (the row holds the word, so the bucket
 * whose lower bound it is), else by reading the words in order.
 */
const MATCHING_STEPS = `SELECT DISTINCT substring(w.trace_ids FROM b * 16 + 1 FOR 16) AS trace_id, substring(w.span_ids FROM b * 8 + 1 FOR 8) AS span_id
    FROM tapedeck_store.trace_words w
   CROSS JOIN LATERAL (
     SELECT bit_and(w.masks[CASE WHEN w.sorted THEN width_bucket(q, w.words) ELSE array_position(w.words, q) END]) AS m
       FROM unnest($2::bigint[]) AS q) x
   CROSS JOIN LATERAL generate_series(0, w.steps - 1) AS b
   WHERE w.tenant = $1 AND w.words @> $2::bigint[] AND (x.m >> b) & 1 = 1`;

/**
 * At least the number of matching steps, from the index alone: the steps of the rows that
 * hold every word (trace_words.steps).
 */
export async function candidateStepBound(
  db: Queryable,
  tenant: string,
  words: readonly string[],
  options: QueryOptions = {},
): Promise<number> {
  const [row] = await db.query<{ n: bigint | number | null }>(
    'SELECT sum(steps) AS n FROM tapedeck_store.trace_words WHERE tenant = $1 AND words @> $2::bigint[]',
    [tenant, words],
    options,
  );
  return Number(row.n ?? 0);
}

/** Matching steps, counted up to `cap` (the scan stops there). */
export async function countMatches(
  db: Queryable,
  tenant: string,
  words: readonly string[],
  cap: number,
  options: QueryOptions = {},
): Promise<number> {
  const [row] = await db.query<{ n: bigint | number }>(
    `SELECT count(*) AS n FROM (${MATCHING_STEPS} LIMIT $3) m`,
    [tenant, words, cap],
    options,
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
  words: readonly string[],
  limit: number,
  after: MatchRow | null = null,
  options: QueryOptions = {},
): Promise<MatchRow[]> {
  const params: unknown[] = [tenant, words, limit];
  let page = '';
  if (after) {
    params.push(after.end_ns.toString(), after.trace_id, after.span_id);
    page = `AND (s.end_ns, m.trace_id, m.span_id) < ($4::bigint, decode($5, 'hex'), decode($6, 'hex'))`;
  }
  const rows = await db.query<MatchRow>(
    `SELECT s.run_id AS run, s.end_ns, encode(m.trace_id, 'hex') AS trace_id, encode(m.span_id, 'hex') AS span_id
       FROM (${MATCHING_STEPS}) m
       JOIN tapedeck_store.spans s ON s.tenant = $1 AND s.trace_id = m.trace_id AND s.span_id = m.span_id
      WHERE s.run_id IS NOT NULL ${page}
      ORDER BY s.end_ns DESC, m.trace_id DESC, m.span_id DESC
      LIMIT $3`,
    params,
    options,
  );
  return rows.map((r) => ({ ...r, end_ns: BigInt(r.end_ns) }));
}

/** The recorded parts of some steps (stored form: payload references unresolved). */
export async function readStepTexts(
  db: Queryable,
  tenant: string,
  keys: readonly { trace_id: string; span_id: string }[],
  options: QueryOptions = {},
): Promise<Map<string, RecordedStep>> {
  const rows = await db.query<StepTextRow>(
    `SELECT ${stepTextColumns}
       FROM tapedeck_store.steps st
       JOIN unnest($2::text[], $3::text[]) AS k(trace_id, span_id)
         ON st.trace_id = decode(k.trace_id, 'hex') AND st.span_id = decode(k.span_id, 'hex')
      WHERE st.tenant = $1`,
    [tenant, keys.map((k) => k.trace_id), keys.map((k) => k.span_id)],
    options,
  );
  const out = new Map<string, RecordedStep>();
  for (const r of rows) {
    out.set(`${r.trace_id}/${r.span_id}`, recordedStepOf(r));
  }
  return out;
}

/**
 * Each run's last span end, over all its spans, and whether it failed (the SQL rule,
 * tapedeck_store.run_failed; tapes/run-outcome.ts turns these into the outcome).
 */
export async function readRunEnds(
  db: Queryable,
  tenant: string,
  runs: readonly string[],
  options: QueryOptions = {},
): Promise<Map<string, RunEnd>> {
  if (runs.length === 0) return new Map();
  const rows = await db.query<{ run: string; last_end_ns: bigint; failed: boolean }>(
    `WITH wanted AS (SELECT DISTINCT unnest($2::text[]) AS run_id),
     last AS (
       SELECT s.run_id, max(s.end_ns) AS last_end_ns
         FROM tapedeck_store.spans s JOIN wanted w ON s.run_id = w.run_id
        WHERE s.tenant = $1
        GROUP BY s.run_id)
     SELECT l.run_id AS run, l.last_end_ns, tapedeck_store.run_failed($1, l.run_id, l.last_end_ns) AS failed
       FROM last l`,
    [tenant, runs],
    options,
  );
  return new Map(rows.map((r) => [r.run, { lastEndNs: BigInt(r.last_end_ns), failed: r.failed === true }]));
}
