// What a word costs recall's words index as the index grows: PostgreSQL alone, no tapedeck.
// Messages' words as ingest stores them (a sorted bigint[] a message, STORAGE EXTERNAL, a GIN
// with the default pending list) are inserted in batches into a table of their own; each
// message draws BENCH_TOKENS words (10,000: a 64 KB prompt) at natural frequencies (Zipf over
// BENCH_VOCABULARY, 20,000, as the ingest bench's text) plus one word never seen before. Prints,
// per BENCH_WINDOW messages: ms a batch, µs a word (the batch's time, and its backend's CPU),
// WAL a batch, the index's size.
// BENCH_INDEX compares the GIN with what else could hold the words: `postings` (no GIN; per
// batch, one row a distinct word with the ids of the batch's messages holding it, B-tree on the
// word: an inverted index written a transaction at a time), `bitmaps` (the same rows with the
// ids as a bitmap over the batch's range of ids, bytea kept uncompressed) or `none` (the
// messages alone, what all add to), or `hybrid` (bitmap rows for the words at least
// BENCH_HYBRID_MIN of a batch's messages hold, 8 by default, and a GIN on each message's
// other words, kept in a column of their own). BENCH_GIN_WITH sets the GIN's storage parameters (e.g.
// "WITH (fastupdate = off)", "WITH (gin_pending_list_limit = 32768)") and BENCH_WORK_MEM the
// session's work_mem, which bounds what a flush of the pending list merges at a time.
// Not part of `npm test` or `npm run bench`; docs/benchmarks.md has the figures.
//
// Run:  node scripts/gin-growth.mjs     (no build needed; about 10 min with the defaults)
//       BENCH_TOKENS=300 BENCH_BATCH=512 BENCH_MESSAGES=100000 BENCH_WINDOW=20000: 2 KB prompts
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test, beside which a scratch database is made and dropped.
import { cpuSecondsOf } from '../bench/lib/process-cpu.mjs';
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
const INDEX = process.env.BENCH_INDEX ?? 'gin';
if (!['gin', 'postings', 'bitmaps', 'hybrid', 'none'].includes(INDEX))
  throw new Error(`BENCH_INDEX: gin, postings, bitmaps, hybrid or none, not ${INDEX}`);
const HYBRID_MIN = Number(process.env.BENCH_HYBRID_MIN ?? 8);

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
let nextId = 1;
/** One message: its id and its distinct words, ascending. */
function message() {
  const words = new Set();
  for (let i = 0; i < TOKENS; i++) words.add(word());
  words.add(unseen++);
  return { id: nextId++, words: [...words].sort((a, b) => a - b) };
}
const literal = (values) => `{${values.join(',')}}`;

/** The batch's postings: each distinct word once, with the ids of the messages holding it. */
function postings(batch) {
  const ids = new Map();
  for (const m of batch)
    for (const w of m.words) {
      const list = ids.get(w);
      if (list) list.push(m.id);
      else ids.set(w, [m.id]);
    }
  return ids;
}

/** A posting list as a bitmap over ids from `first`: bit i of byte i >> 3 is id first + i. */
function bitmapHex(ids, first, last) {
  const bits = Buffer.alloc(((last - first) >> 3) + 1);
  for (const id of ids) bits[(id - first) >> 3] |= 1 << ((id - first) & 7);
  return bits.toString('hex');
}

const scratch = await openScratchDatabase('gin_growth', server);
const { db } = scratch;
try {
  await db.connect();
  const [{ pid }] = (await db.query('SELECT pg_backend_pid() AS pid')).rows;
  if (process.env.BENCH_WORK_MEM) await db.query(`SET work_mem = '${process.env.BENCH_WORK_MEM}'`);
  const [settings] = (
    await db.query(
      "SELECT current_setting('shared_buffers') AS sb, current_setting('gin_pending_list_limit') AS pending",
    )
  ).rows;
  console.log(`shared_buffers ${settings.sb}, gin_pending_list_limit ${settings.pending}`);
  console.log(`vocabulary ${VOCABULARY}, ${TOKENS} words drawn a message, batches of ${BATCH}, index: ${INDEX}`);
  await db.query('CREATE TABLE messages (id bigint PRIMARY KEY, words bigint[])');
  await db.query('ALTER TABLE messages ALTER COLUMN words SET STORAGE EXTERNAL');
  if (INDEX === 'gin')
    await db.query(`CREATE INDEX messages_words ON messages USING gin (words)${process.env.BENCH_GIN_WITH ?? ''}`);
  if (INDEX === 'postings') {
    await db.query('CREATE TABLE postings (word bigint, ids bigint[])');
    await db.query('CREATE INDEX postings_word ON postings (word)');
  }
  if (INDEX === 'hybrid') {
    await db.query('ALTER TABLE messages ADD COLUMN rare bigint[]');
    await db.query('ALTER TABLE messages ALTER COLUMN rare SET STORAGE EXTERNAL');
    await db.query('CREATE INDEX messages_rare ON messages USING gin (rare)');
  }
  if (INDEX === 'bitmaps' || INDEX === 'hybrid') {
    await db.query('CREATE TABLE postings (word bigint, first bigint, bits bytea)');
    await db.query('ALTER TABLE postings ALTER COLUMN bits SET STORAGE EXTERNAL');
    await db.query('CREATE INDEX postings_word ON postings (word)');
  }
  const measured = {
    gin: 'messages_words',
    postings: 'postings',
    bitmaps: 'postings',
    hybrid: 'postings',
    none: 'messages',
  }[INDEX];
  console.log(`messages\tms a batch\tµs a word\tcpu µs a word\tWAL MB a batch\t${measured} MB`);
  let window = { ms: 0, cpu: 0, wal: 0, words: 0, batches: 0 };
  for (let done = 0; done < MESSAGES; ) {
    const batch = Array.from({ length: BATCH }, message);
    const [{ lsn }] = (await db.query('SELECT pg_current_wal_lsn() AS lsn')).rows;
    const cpu = cpuSecondsOf(pid);
    const start = process.hrtime.bigint();
    await db.query('BEGIN');
    if (INDEX === 'hybrid') {
      const ids = postings(batch);
      const rare = batch.map((m) => m.words.filter((w) => ids.get(w).length < HYBRID_MIN));
      await db.query(
        'INSERT INTO messages (id, words, rare) SELECT unnest($1::bigint[]), unnest($2::text[])::bigint[], unnest($3::text[])::bigint[]',
        [batch.map((m) => m.id), batch.map((m) => literal(m.words)), rare.map(literal)],
      );
      const first = batch[0].id;
      const last = batch.at(-1).id;
      const frequent = [...ids].filter(([, list]) => list.length >= HYBRID_MIN);
      await db.query(
        "INSERT INTO postings (word, first, bits) SELECT unnest($1::bigint[]), $2, decode(unnest($3::text[]), 'hex')",
        [frequent.map(([w]) => w), first, frequent.map(([, list]) => bitmapHex(list, first, last))],
      );
    } else
      await db.query('INSERT INTO messages (id, words) SELECT unnest($1::bigint[]), unnest($2::text[])::bigint[]', [
        batch.map((m) => m.id),
        batch.map((m) => literal(m.words)),
      ]);
    if (INDEX === 'postings') {
      const ids = postings(batch);
      await db.query('INSERT INTO postings (word, ids) SELECT unnest($1::bigint[]), unnest($2::text[])::bigint[]', [
        [...ids.keys()],
        [...ids.values()].map(literal),
      ]);
    }
    if (INDEX === 'bitmaps') {
      const ids = postings(batch);
      const first = batch[0].id;
      const last = batch.at(-1).id;
      await db.query(
        "INSERT INTO postings (word, first, bits) SELECT unnest($1::bigint[]), $2, decode(unnest($3::text[]), 'hex')",
        [[...ids.keys()], first, [...ids.values()].map((list) => bitmapHex(list, first, last))],
      );
    }
    await db.query('COMMIT');
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const spent = cpuSecondsOf(pid) - cpu;
    const [{ wal }] = (await db.query('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS wal', [lsn])).rows;
    done += BATCH;
    window = {
      ms: window.ms + ms,
      cpu: window.cpu + spent,
      wal: window.wal + Number(wal),
      words: window.words + batch.reduce((n, m) => n + m.words.length, 0),
      batches: window.batches + 1,
    };
    if (done % WINDOW < BATCH) {
      const [{ size }] = (await db.query('SELECT pg_total_relation_size($1) AS size', [measured])).rows;
      const { ms: sum, cpu: seconds, wal: bytes, words, batches } = window;
      console.log(
        [
          done,
          (sum / batches).toFixed(1),
          ((sum * 1000) / words).toFixed(3),
          ((seconds * 1e6) / words).toFixed(3),
          (bytes / batches / 1e6).toFixed(2),
          (Number(size) / 1e6).toFixed(0),
        ].join('\t'),
      );
      window = { ms: 0, cpu: 0, wal: 0, words: 0, batches: 0 };
    }
  }
} finally {
  await scratch.cleanup();
}
