/**
 * @module recall/query
 * Recall's SQL, the same on PGlite and PostgreSQL. Words are hashes of the lexemes tokenize.ts
 * finds (word-hash.ts), so a query is the bigint[] of its lexemes' hashes: no parser and no
 * dictionary on either side, whatever the server's locale.
 *
 * A matching span is a step that holds every word of the query, in its own text
 * (tapedeck_store.steps.words) or in any message of its lists, reached through the steps'
 * message lists. A message holds a word in its `words` (the GIN) or in its block's
 * postings (a bit; tapes/message-rows.ts): messagesWith, holds and postedIn read both. Each word's
 * steps are found through the indexes, and a step matches when it is found for every word. "Newest" is by the end of the
 * span, ties by trace and span id (descending), so pages are stable.
 */
import type { Queryable, QueryOptions } from '../store/database.js';
import type { RunEnd } from '../tapes/run-outcome.js';
import { idsText } from '../tapes/tape-reader.js';
import { storedJson } from '../json/json-value.js';
import { type CommonWords, commonWords } from './common-words.js';
import type { RecordedStep } from './recorded-text.js';
import { termLexemes, type Term } from './tokenize.js';
import { wordHash, wordId } from './word-hash.js';
import { BLOCK_SIZE, POSTED_FROM } from '../tapes/message-rows.js';

/** The query's words: each distinct lexeme of its terms, as the bigint of its hash (decimal). */
export function queryWords(terms: readonly Term[]): string[] {
  const lexemes = [...new Set(terms.flatMap(termLexemes))];
  return lexemes.map((l) => wordId(...wordHash(l)));
}

/**
 * The ids of the messages holding word `w` (an SQL expression; $1 the tenant): those with it
 * in their `words`, and the bits of its postings.
 */
const messagesWith = (w: string) => `SELECT m.id FROM tapedeck_store.messages m
     WHERE m.tenant = $1 AND m.words @> ARRAY[${w}]
    UNION ALL
    SELECT p.block * ${BLOCK_SIZE} + b.at
      FROM tapedeck_store.message_postings p
     CROSS JOIN LATERAL generate_series(0, length(p.bits) * 8 - 1) AS b(at)
     WHERE p.tenant = $1 AND p.word = ${w} AND get_bit(p.bits, b.at) = 1`;

/**
 * Whether the bit of message `id` (an SQL expression) is set in posting `p` of its block: a
 * CASE, as get_bit fails past the end and AND does not promise to test the length first.
 */
const bitSet = (id: string) => `CASE WHEN ${id} % ${BLOCK_SIZE} < length(p.bits) * 8
      THEN get_bit(p.bits, (${id} % ${BLOCK_SIZE})::int) = 1 ELSE false END`;

/**
 * Whether message `id` (its `words` those) holds word `w` (SQL expressions; $1 the tenant):
 * in its words, or as a bit of the word's posting over its block.
 */
const holds = (id: string, words: string, w: string) => `(coalesce(${words} @> ARRAY[${w}], false) OR EXISTS (
      SELECT 1 FROM tapedeck_store.message_postings p
       WHERE p.tenant = $1 AND p.word = ${w} AND p.block = ${id} / ${BLOCK_SIZE} AND ${bitSet(id)}))`;

/**
 * Whether one of the messages of `list` (an SQL bigint[]) has word `w` posted: one probe of the
 * word's posting for each block they are in (a conversation's messages share a few), where a
 * probe per message read as many rows as the list has ids.
 */
const postedIn = (list: string, w: string) => `EXISTS (
      SELECT 1
        FROM (SELECT DISTINCT d.id / ${BLOCK_SIZE} AS block FROM unnest(${list}) AS d(id)) b
        JOIN tapedeck_store.message_postings p ON p.tenant = $1 AND p.word = ${w} AND p.block = b.block
       WHERE EXISTS (SELECT 1 FROM unnest(${list}) AS d(id)
                      WHERE d.id / ${BLOCK_SIZE} = p.block AND ${bitSet('d.id')}))`;

/**
 * Words counted at most, per word, to choose the one to start from (rarestFirst): enough to
 * tell a rare word from a common one without reading every row of a common one.
 */
const RARITY_CAP = 10_000;

/** A query's words, the rarest first, and how many of them (from the first) are rare. */
export interface RankedWords {
  words: string[];
  /** the first `rare` words are in fewer than RARITY_CAP steps and messages each */
  rare: number;
  /** steps and messages holding each word, counted up to RARITY_CAP (a word alone: not counted) */
  counts: number[];
}

/**
 * The words, the rarest first (steps and messages holding each, up to RARITY_CAP): matching
 * starts from the steps holding the first word and checks the others in them only. A word the
 * table's statistics list among its most common (common-words.ts) is taken at their estimate;
 * the others are counted, which for a common word read up to RARITY_CAP heap rows a table
 * (docs/benchmarks.md, "Recall at 1M conversation spans"). The counts choose only how matching
 * goes, never what it finds: an estimate off by any amount changes the time, not the answer.
 */
export async function rarestFirst(
  db: Queryable,
  tenant: string,
  words: readonly string[],
  options: QueryOptions = {},
): Promise<RankedWords> {
  if (words.length < 2) return { words: [...words], rare: words.length, counts: [] };
  const common = await commonWords(db);
  const { steps, messages } = estimated(common, words);
  const count = new Map(words.map((w) => [w, (steps.get(w) ?? 0) + (messages.get(w) ?? 0)]));
  // Postings are always counted: a row holds a word's bits for a block's messages, so
  // RARITY_CAP bits take at most RARITY_CAP / POSTED_FROM rows.
  const rows = await db.query<{ w: string; n: bigint | number }>(
    `SELECT q.w::text AS w,
            CASE WHEN q.steps THEN (SELECT count(*) FROM (SELECT 1 FROM tapedeck_store.steps
                                     WHERE tenant = $1 AND words @> ARRAY[q.w] LIMIT $4) s) ELSE 0 END
          + CASE WHEN q.messages THEN (SELECT count(*) FROM (SELECT 1 FROM tapedeck_store.messages
                                        WHERE tenant = $1 AND words @> ARRAY[q.w] LIMIT $4) m) ELSE 0 END
          + (SELECT coalesce(sum(bit_count(p.bits)), 0)
               FROM (SELECT p.bits FROM tapedeck_store.message_postings p
                      WHERE p.tenant = $1 AND p.word = q.w LIMIT $4 / ${POSTED_FROM} + 1) p)::bigint AS n
       FROM unnest($2::bigint[], $3::boolean[], $5::boolean[]) AS q(w, steps, messages)`,
    [tenant, words, words.map((w) => !steps.has(w)), RARITY_CAP, words.map((w) => !messages.has(w))],
    { ...options, prepared: true },
  );
  for (const r of rows) count.set(r.w, (count.get(r.w) ?? 0) + Number(r.n));
  const ranked = [...words].sort((a, b) => (count.get(a) ?? 0) - (count.get(b) ?? 0));
  const counts = ranked.map((w) => count.get(w) ?? 0);
  return { words: ranked, rare: counts.filter((n) => n < RARITY_CAP).length, counts };
}

/**
 * Estimates are taken only clear of RARITY_CAP, where they cannot tell a rare word from a
 * common one. ANALYZE samples 30,000 rows (at the default statistics target), so a word in
 * 10,000 of 1.9M messages is seen about 160 times there, give or take 8 %: `paris`, held by
 * 8,932 and estimated at 10,133, ranked as common made `weather Paris` take 9.2 s, not 3.1.
 */
const ESTIMATED_BELOW = RARITY_CAP * 0.7;
const ESTIMATED_FROM = RARITY_CAP * 1.5;

/** The words' estimates (capped at RARITY_CAP) that can be used, per table; the rest are counted. */
function estimated(
  common: CommonWords,
  words: readonly string[],
): { steps: Map<string, number>; messages: Map<string, number> } {
  const usable = (table: ReadonlyMap<string, number>) => {
    const out = new Map<string, number>();
    for (const w of words) {
      const n = table.get(w);
      if (n !== undefined && (n < ESTIMATED_BELOW || n >= ESTIMATED_FROM)) out.set(w, Math.min(n, RARITY_CAP));
    }
    return out;
  };
  return { steps: usable(common.steps), messages: usable(common.messages) };
}

/**
 * Ids of the first word's messages per GIN scan of the steps' message lists: one scan per
 * message read each list's index once per message (a common word's thousands of messages
 * took seconds); one scan of all of them costs GIN a pass over every id asked for each
 * step it finds, so a very common word's took tens of seconds. Chunks of IDS_PER_GROUP
 * squared keep both small. Each message's chunk is its id and the next ones (lead): a window
 * reads only as far ahead as it needs, where grouping would read every message of a common
 * word before its steps. A chunk is made in two windows: a message's id and the next three,
 * every fourth row kept, then four of those joined, every fourth kept: the chunks fifteen
 * lead()s per message would make, for five window calls a message rather than sixteen
 * (docs/benchmarks.md, "Recall at 1M conversation spans").
 */
const IDS_PER_GROUP = 4;
const leads = (value: string) =>
  Array.from({ length: IDS_PER_GROUP - 1 }, (_, i) => `lead(${value}, ${i + 1}) OVER ()`);

/**
 * The opening of every matching statement's WITH list: first_word_steps, the steps holding the
 * first word of $2 in their own words or in one of their messages (the messages through their
 * words' GIN index and the word's postings, their steps through the message lists',
 * IDS_PER_GROUP squared ids at a time), with their own words and the ids of their lists' messages. A step holding several
 * such messages is found once per list and chunk.
 */
const FIRST_WORD_STEPS = `WITH RECURSIVE first_messages AS (
      SELECT array_remove(g.ids, NULL) AS ids
        FROM (SELECT row_number() OVER () AS n, ${['f.ids', ...leads('f.ids')].join(' || ')} AS ids
                FROM (SELECT row_number() OVER () AS n, ARRAY[m.id, ${leads('m.id').join(', ')}] AS ids
                        FROM (${messagesWith('($2::bigint[])[1]')}) m) f
               WHERE f.n % ${IDS_PER_GROUP} = 1) g
       WHERE g.n % ${IDS_PER_GROUP} = 1),
    first_word_steps AS (
      SELECT st.trace_id, st.span_id, st.words,
             coalesce(st.request_messages, '{}') || coalesce(st.response_messages, '{}') AS messages
        FROM tapedeck_store.steps st
       WHERE st.tenant = $1 AND st.words @> ($2::bigint[])[1:1]
      UNION ALL
      SELECT st.trace_id, st.span_id, st.words,
             coalesce(st.request_messages, '{}') || coalesce(st.response_messages, '{}')
        FROM first_messages f
        JOIN tapedeck_store.steps st ON st.tenant = $1 AND st.request_messages && f.ids
      UNION ALL
      SELECT st.trace_id, st.span_id, st.words,
             coalesce(st.request_messages, '{}') || coalesce(st.response_messages, '{}')
        FROM first_messages f
        JOIN tapedeck_store.steps st ON st.tenant = $1 AND st.response_messages && f.ids)`;

/**
 * How many times as many steps and messages the other words must have as the first for its
 * steps to be collected (COLLECTED_MATCHES): each of the first word's brings the calls that
 * resend it and their messages, where the hash tables read each of the others' once. The
 * crossover measured on conversations: docs/benchmarks.md, "Recall at 1M conversation spans".
 */
const COLLECT_RATIO = 200;

/** Whether one of step c's messages is listed with word q.w in `held` (its w and id columns). */
const inMessagesOf = (held: string) =>
  `coalesce((SELECT bool_or((q.w, d.id) IN (SELECT w, id FROM ${held})) FROM unnest(c.messages) AS d(id)), false)`;

/**
 * The steps holding every word ($1 tenant, $2 words, distinct, the rarest first, the first
 * `rare` of them rare), as they come: trace_id and span_id. Each step of the first word is
 * checked for the others: a rare word in its hash table, a common word (it would fill the table
 * with most messages) in the step's messages, where it is likely in one of the first. UNION in
 * a recursive query drops the repeats as the rows come (its recursive part adds nothing), where
 * DISTINCT reads every match first, so a LIMIT over this stops reading a common word's steps
 * once it has enough.
 */
const streamedMatches = (rare: number) => `${FIRST_WORD_STEPS},
    -- the rare words' messages, read once into a hash table of ids: a step holds the word when
    -- one of its ids is there
    rare_messages AS MATERIALIZED (
      SELECT q.w, m.id
        FROM unnest(($2::bigint[])[2:${rare}]) AS q(w)
       CROSS JOIN LATERAL (${messagesWith('q.w')}) m),
    found (trace_id, span_id) AS (
  SELECT c.trace_id, c.span_id
    FROM first_word_steps c
   WHERE NOT EXISTS (
     SELECT 1 FROM unnest(($2::bigint[])[2:]) WITH ORDINALITY AS q(w, i)
      WHERE NOT CASE
          WHEN q.i < ${rare} THEN coalesce(c.words @> ARRAY[q.w], false) OR ${inMessagesOf('rare_messages')}
          ELSE coalesce(c.words @> ARRAY[q.w], false) OR ${postedIn('c.messages', 'q.w')} OR EXISTS (
            SELECT 1
              FROM unnest(c.messages) AS d(id)
              JOIN tapedeck_store.messages m ON m.tenant = $1 AND m.id = d.id
             WHERE m.words @> ARRAY[q.w])
        END)
  UNION
  SELECT trace_id, span_id FROM found WHERE false)
  SELECT trace_id, span_id FROM found`;

/**
 * The same when the first word is much rarer than the others (COLLECT_RATIO), so its steps
 * are few: they are collected, then each distinct message they hold is read once for the other
 * words. A conversation's calls resend the same messages: checked step by step, each was read
 * once per call, and a rare word's hash table reads every message holding it. Each word's
 * messages are one array, which a step's list overlaps or not, where looking them up id by
 * id per step and word was slower (docs/benchmarks.md, "Recall at 1M conversation spans").
 */
const COLLECTED_MATCHES = `${FIRST_WORD_STEPS},
    candidates AS MATERIALIZED (SELECT * FROM first_word_steps),
    candidate_ids AS MATERIALIZED (SELECT DISTINCT d.id FROM candidates c CROSS JOIN unnest(c.messages) AS d(id)),
    held AS MATERIALIZED (
      SELECT h.w, array_agg(h.id) AS ids
        FROM (SELECT q.w, d.id
                FROM candidate_ids d
                -- each message by its key (PostgreSQL cannot tell how many there are)
                CROSS JOIN LATERAL (SELECT m.words FROM tapedeck_store.messages m
                                     WHERE m.tenant = $1 AND m.id = d.id OFFSET 0) m
                JOIN unnest(($2::bigint[])[2:]) AS q(w) ON m.words @> ARRAY[q.w]
              UNION ALL
              -- each word's posting once for each block the messages are in
              SELECT q.w, d.id
                FROM (SELECT DISTINCT d.id / ${BLOCK_SIZE} AS block FROM candidate_ids d) b
                CROSS JOIN unnest(($2::bigint[])[2:]) AS q(w)
                JOIN tapedeck_store.message_postings p ON p.tenant = $1 AND p.word = q.w AND p.block = b.block
                JOIN candidate_ids d ON d.id / ${BLOCK_SIZE} = p.block AND ${bitSet('d.id')}) h
       GROUP BY h.w)
  SELECT DISTINCT c.trace_id, c.span_id
    FROM candidates c
   WHERE NOT EXISTS (
     SELECT 1 FROM unnest(($2::bigint[])[2:]) AS q(w)
      WHERE NOT coalesce(c.words @> ARRAY[q.w], false)
        AND NOT coalesce(c.messages && (SELECT h.ids FROM held h WHERE h.w = q.w), false))`;

/**
 * The steps of a query of one word, each once (repeats dropped as they come, as in
 * streamedMatches): nothing else to check, where the streamed statement checks each step
 * against an empty list of other words (a common word's 200,000 steps paid for it) and is
 * longer to plan.
 */
const ONE_WORD_MATCHES = `${FIRST_WORD_STEPS},
    found (trace_id, span_id) AS (
  SELECT trace_id, span_id FROM first_word_steps
  UNION
  SELECT trace_id, span_id FROM found WHERE false)
  SELECT trace_id, span_id FROM found`;

/** The steps holding every word: trace_id and span_id, each once. */
function matchingSteps({ words, rare, counts }: RankedWords): string {
  if (words.length === 1) return ONE_WORD_MATCHES;
  const [first = 0, ...others] = counts;
  if (others.reduce((a, b) => a + b, 0) > first * COLLECT_RATIO) return COLLECTED_MATCHES;
  // an integer recall counted, not input: written into the statement
  return streamedMatches(Math.trunc(rare));
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
  words: RankedWords,
  limit: number,
  after: MatchRow | null = null,
  options: QueryOptions = {},
): Promise<MatchRow[]> {
  const params: unknown[] = [tenant, words.words, limit];
  let page = '';
  if (after) {
    params.push(after.end_ns.toString(), after.trace_id, after.span_id);
    page = `WHERE (s.end_ns, m.trace_id, m.span_id) < ($4::bigint, decode($5, 'hex'), decode($6, 'hex'))`;
  }
  const rows = await db.query<MatchRow>(
    `SELECT s.run_id AS run, s.end_ns, encode(m.trace_id, 'hex') AS trace_id, encode(m.span_id, 'hex') AS span_id
       FROM (${matchingSteps(words)}) m
       -- each match's span by its key, as firstMatches does
       CROSS JOIN LATERAL (SELECT s.run_id, s.end_ns FROM tapedeck_store.spans s
                            WHERE s.tenant = $1 AND s.trace_id = m.trace_id AND s.span_id = m.span_id
                              AND s.run_id IS NOT NULL OFFSET 0) s
      ${page}
      ORDER BY s.end_ns DESC, m.trace_id DESC, m.span_id DESC
      LIMIT $3`,
    params,
    { ...options, prepared: true },
  );
  return rows.map((r) => ({ ...r, end_ns: BigInt(r.end_ns) }));
}

/**
 * The matching spans counted up to `maxTotal` + 1, and the newest `limit` of them that belong
 * to a run when there are at most `maxTotal` (recall refuses more): one pass over the matches
 * for both, which stops once there are too many.
 */
export async function firstMatches(
  db: Queryable,
  tenant: string,
  words: RankedWords,
  limit: number,
  maxTotal: number,
  options: QueryOptions = {},
): Promise<{ total: number; matches: MatchRow[] }> {
  const rows = await db.query<{ total: bigint | number } & { [K in keyof MatchRow]: MatchRow[K] | null }>(
    `WITH matching AS MATERIALIZED (SELECT * FROM (${matchingSteps(words)}) f LIMIT $4::int + 1),
          total AS (SELECT count(*) AS n FROM matching)
     SELECT t.n AS total, x.run, x.end_ns, x.trace_id, x.span_id
       FROM total t
       LEFT JOIN LATERAL (
         SELECT s.run_id AS run, s.end_ns, encode(m.trace_id, 'hex') AS trace_id, encode(m.span_id, 'hex') AS span_id
           FROM matching m
           -- each match's span by its key (PostgreSQL cannot tell how many matches there are,
           -- and guessed a hash join over every span)
           CROSS JOIN LATERAL (SELECT s.run_id, s.end_ns FROM tapedeck_store.spans s
                                WHERE s.tenant = $1 AND s.trace_id = m.trace_id AND s.span_id = m.span_id
                                  AND s.run_id IS NOT NULL OFFSET 0) s
          WHERE t.n <= $4
          ORDER BY s.end_ns DESC, m.trace_id DESC, m.span_id DESC
          LIMIT $3) x ON true`,
    [tenant, words.words, limit, maxTotal],
    { ...options, prepared: true },
  );
  // no match: one row of the count alone (the page's columns null)
  const matches = rows.flatMap((r) =>
    typeof r.run === 'string' && r.end_ns !== null && r.trace_id !== null && r.span_id !== null
      ? [{ run: r.run, end_ns: BigInt(r.end_ns), trace_id: r.trace_id, span_id: r.span_id }]
      : [],
  );
  return { total: Number(rows[0]?.total ?? 0), matches };
}

/** A step as the exact check reads it: its own recorded parts, and the ids of its lists' messages. */
export interface StepParts {
  /** request and response null where they are message lists (their messages are read apart) */
  own: RecordedStep;
  messages: string[];
}

/**
 * Some steps' parts (stored form: payload references unresolved), by `trace_id/span_id`, and
 * the bodies of those of their messages that may hold one of the runs (every adjacent pair of
 * a run's characters among their words, or no words: stored before recall indexed messages),
 * by id. One statement, not one for each: each is a round trip (docs/benchmarks.md, "Recall at
 * 1M conversation spans"). The two kinds of row are told apart by `key`, null for a message.
 */
export async function readTextToCheck(
  db: Queryable,
  tenant: string,
  keys: readonly { trace_id: string; span_id: string }[],
  runs: readonly Term[],
  options: QueryOptions = {},
): Promise<{ steps: Map<string, StepParts>; bodies: Map<string, string> }> {
  const runWords = runs.map((r) => queryWords([r]).join(','));
  const rows = await db.query<
    | {
        key: string;
        name: string;
        tool: string | null;
        request: string | null;
        response: string | null;
        /** ids, comma-separated */
        messages: string;
      }
    | { key: null; id: string; body: string }
  >(
    `WITH st AS MATERIALIZED (
       SELECT encode(st.trace_id, 'hex') || '/' || encode(st.span_id, 'hex') AS key, st.name, st.tool,
              CASE WHEN st.request_messages IS NULL THEN st.request END AS request,
              CASE WHEN st.response_messages IS NULL THEN st.response END AS response,
              coalesce(st.request_messages, '{}') || coalesce(st.response_messages, '{}') AS ids
         FROM tapedeck_store.steps st
         JOIN unnest($2::text[], $3::text[]) AS k(trace_id, span_id)
           ON st.trace_id = decode(k.trace_id, 'hex') AND st.span_id = decode(k.span_id, 'hex')
        WHERE st.tenant = $1)
     SELECT st.key, st.name, st.tool, st.request, st.response, ${idsText('st.ids')} AS messages,
            NULL AS id, NULL AS body
       FROM st
     UNION ALL
     SELECT NULL, NULL, NULL, NULL, NULL, NULL, m.id::text, m.body
       FROM (SELECT DISTINCT unnest(st.ids) AS id FROM st) l
       JOIN tapedeck_store.messages m ON m.tenant = $1 AND m.id = l.id
      WHERE m.words IS NULL
         OR EXISTS (SELECT 1 FROM unnest($4::text[]) AS r(w)
                     WHERE NOT EXISTS (SELECT 1 FROM unnest(string_to_array(r.w, ',')::bigint[]) AS x(w)
                                        WHERE NOT ${holds('m.id', 'm.words', 'x.w')}))`,
    [tenant, keys.map((k) => k.trace_id), keys.map((k) => k.span_id), runWords],
    { ...options, prepared: true },
  );
  const steps = new Map<string, StepParts>();
  const bodies = new Map<string, string>();
  for (const r of rows) {
    if (r.key === null) bodies.set(r.id, r.body);
    else
      steps.set(r.key, {
        own: { name: r.name, tool: r.tool, request: storedJson(r.request), response: storedJson(r.response) },
        messages: r.messages === '' ? [] : r.messages.split(','),
      });
  }
  return { steps, bodies };
}

/** How a run ended (RunEnd), and how many spans it has. */
export interface RunFacts extends RunEnd {
  spans: number;
}

/**
 * Each run's last span end, over all its spans, and whether it failed (the SQL rule,
 * tapedeck_store.run_failed; tapes/run-outcome.ts turns these into the outcome), and its span
 * count (recall reads runs in batches of a bounded number of spans).
 */
export async function readRunEnds(
  db: Queryable,
  tenant: string,
  runs: readonly string[],
  options: QueryOptions = {},
): Promise<Map<string, RunFacts>> {
  if (runs.length === 0) return new Map();
  const rows = await db.query<{ run: string; last_end_ns: bigint; failed: boolean; spans: bigint | number }>(
    `WITH wanted AS (SELECT DISTINCT unnest($2::text[]) AS run_id),
     last AS (
       SELECT s.run_id, max(s.end_ns) AS last_end_ns, count(*) AS spans
         FROM tapedeck_store.spans s JOIN wanted w ON s.run_id = w.run_id
        WHERE s.tenant = $1
        GROUP BY s.run_id)
     SELECT l.run_id AS run, l.last_end_ns, l.spans, tapedeck_store.run_failed($1, l.run_id, l.last_end_ns) AS failed
       FROM last l`,
    [tenant, runs],
    { ...options, prepared: true },
  );
  return new Map(
    rows.map((r) => [r.run, { lastEndNs: BigInt(r.last_end_ns), failed: r.failed === true, spans: Number(r.spans) }]),
  );
}
