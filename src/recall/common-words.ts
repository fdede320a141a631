/**
 * @module recall/common-words
 * The words ANALYZE lists among the most common elements of steps' and messages' `words`
 * (about a thousand a table, with the share of rows holding each), as estimated row counts:
 * recall ranks a query's words by them without counting those words in the tables, which read
 * up to thousands of heap rows a word (query.ts, rarestFirst). Read from `pg_stats` at most
 * once a minute per database: the statistics change when ANALYZE runs, and the estimate
 * scales with the table's size now, as the planner's does.
 */
import type { Queryable } from '../store/database.js';

/** Estimated rows holding each listed word, by word id (decimal text). */
export interface CommonWords {
  steps: ReadonlyMap<string, number>;
  messages: ReadonlyMap<string, number>;
}

/** How long a reading of the statistics is used before it is read again. */
const REREAD_MS = 60_000;

const read = new WeakMap<Queryable, { at: number; words: Promise<CommonWords> }>();

/**
 * The common words of db's tables; none where a table was never analyzed. One reading serves
 * the queries that ask meanwhile, so it takes no query's signal: one answered early would fail
 * the others.
 */
export function commonWords(db: Queryable, now = Date.now()): Promise<CommonWords> {
  const held = read.get(db);
  if (held && now - held.at < REREAD_MS) return held.words;
  const words = readCommonWords(db);
  read.set(db, { at: now, words });
  // a failed reading is not kept: the next query reads again
  words.catch(() => {
    if (read.get(db)?.words === words) read.delete(db);
  });
  return words;
}

async function readCommonWords(db: Queryable): Promise<CommonWords> {
  const rows = await db.query<{ t: string; w: string; n: number }>(
    `SELECT c.relname AS t, e.w::text AS w,
            (e.f * (1 - s.null_frac) * c.reltuples / c.relpages
               * (pg_relation_size(c.oid) / current_setting('block_size')::int))::float8 AS n
       FROM pg_class c
       JOIN pg_stats s ON s.schemaname = 'tapedeck_store' AND s.tablename = c.relname AND s.attname = 'words'
      -- the frequencies list ends with three more numbers than there are elements: unnest pads
      -- the elements with nulls
      CROSS JOIN LATERAL unnest(s.most_common_elems::text::bigint[], s.most_common_elem_freqs) AS e(w, f)
      WHERE c.oid IN ('tapedeck_store.steps'::regclass, 'tapedeck_store.messages'::regclass)
        AND c.reltuples > 0 AND c.relpages > 0 AND e.w IS NOT NULL`,
  );
  const steps = new Map<string, number>();
  const messages = new Map<string, number>();
  for (const r of rows) (r.t === 'steps' ? steps : messages).set(r.w, Number(r.n));
  return { steps, messages };
}
