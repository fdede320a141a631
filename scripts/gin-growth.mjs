// What a word costs recall's words index as the index grows: PostgreSQL alone, no tapedeck.
// Messages' words as ingest stores them (a sorted bigint[] a message, STORAGE EXTERNAL, a GIN
// with the default pending list) are inserted in batches into a table of their own; each
// message draws BENCH_TOKENS words (10,000: a 64 KB prompt) at natural frequencies (Zipf over
// BENCH_VOCABULARY, 20,000, as the ingest bench's text) plus one word never seen before. Prints,
// per BENCH_WINDOW messages: ms a batch, µs a word, WAL a batch, the index's size.
// Not part of `npm test` or `npm run bench`; docs/benchmarks.md has the figures.
//
// Run:  node scripts/gin-growth.mjs     (no build needed; about 10 min with the defaults)
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test, beside which a scratch database is made and dropped.
import { openScratchDatabase } from '../bench/lib/scratch-database.mjs';

const server =
  process.env.TAPEDECK_BENCH_DATABASE_URL ??
  process.env.TAPEDECK_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const VOCABULARY = Number(process.env.BENCH_VOCABULARY ?? 20_000);
const TOKENS = Number(process.env.BENCH_TOKENS ?? 10_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 60);
const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 40_000);
const WINDOW = Number(process.env.BENCH_WINDOW ?? 2_000);

// Zipf (s = 1) by its cumulative distribution, drawn with a seeded generator.
const cumulative = new Float64Array(VOCABULARY);
let total = 0;
for (let rank = 1; rank <= VOCABULARY; rank++) cumulative[rank - 1] = total += 1 / rank;
for (let i = 0; i < VOCABULARY; i++) cumulative[i] /= total;
let seed = 12345;
const uniform = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 4294967296;
};
function word() {
  const u = uniform();
  let lo = 0;
  let hi = VOCABULARY - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (cumulative[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return lo + 1;
}
let unseen = 1e12;
/** One message's distinct words, ascending, as a bigint[] literal and its length. */
function message() {
  const words = new Set();
  for (let i = 0; i < TOKENS; i++) words.add(word());
  words.add(unseen++);
  const sorted = [...words].sort((a, b) => a - b);
  return { literal: `{${sorted.join(',')}}`, count: sorted.length };
}

const scratch = await openScratchDatabase('gin_growth', server);
const { db } = scratch;
try {
  await db.connect();
  const [settings] = (
    await db.query(
      "SELECT current_setting('shared_buffers') AS sb, current_setting('gin_pending_list_limit') AS pending",
    )
  ).rows;
  console.log(`shared_buffers ${settings.sb}, gin_pending_list_limit ${settings.pending}`);
  console.log(`vocabulary ${VOCABULARY}, ${TOKENS} words drawn a message, batches of ${BATCH}`);
  await db.query('CREATE TABLE messages (id bigserial, words bigint[])');
  await db.query('ALTER TABLE messages ALTER COLUMN words SET STORAGE EXTERNAL');
  await db.query('CREATE INDEX messages_words ON messages USING gin (words)');
  console.log('messages\tms a batch\tµs a word\tWAL MB a batch\tindex MB');
  let window = { ms: 0, wal: 0, words: 0, batches: 0 };
  for (let done = 0; done < MESSAGES; ) {
    const batch = Array.from({ length: BATCH }, message);
    const [{ lsn }] = (await db.query('SELECT pg_current_wal_lsn() AS lsn')).rows;
    const start = process.hrtime.bigint();
    await db.query('INSERT INTO messages (words) SELECT unnest($1::text[])::bigint[]', [batch.map((m) => m.literal)]);
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const [{ wal }] = (await db.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS wal', [lsn])).rows;
    done += BATCH;
    window = {
      ms: window.ms + ms,
      wal: window.wal + Number(wal),
      words: window.words + batch.reduce((n, m) => n + m.count, 0),
      batches: window.batches + 1,
    };
    if (done % WINDOW < BATCH) {
      const [{ size }] = (await db.query("SELECT pg_relation_size('messages_words') AS size")).rows;
      const { ms: sum, wal: bytes, words, batches } = window;
      console.log(
        [done, (sum / batches).toFixed(1), ((sum * 1000) / words).toFixed(3), (bytes / batches / 1e6).toFixed(2)]
          .concat((Number(size) / 1e6).toFixed(0))
          .join('\t'),
      );
      window = { ms: 0, wal: 0, words: 0, batches: 0 };
    }
  }
} finally {
  await scratch.cleanup();
}
