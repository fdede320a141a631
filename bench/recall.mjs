// Recall latency over 1M stored spans (GET /v1/recall, docs/api.md).
// Run after `npx tsc -p tsconfig.build.json`:  node bench/recall.mjs
//
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test. A fresh database is created next to it,
// migrated, filled (no ingest: this measures reads) and dropped afterwards (BENCH_KEEP=1
// keeps it). BENCH_SPANS sets the size (default 1,000,000). Spans and steps are made in SQL
// (generate_series); recall's words are drawn and hashed in JS (recall/word-hash.ts), copied
// (binary COPY) into a scratch table, and from there into where ingest keeps them: a model
// call's in the one message of its request (tapedeck_store.messages.words, the step holding
// its digest), a tool step's in its own row (tapedeck_store.steps.words). The GIN indexes on
// words and digest lists are built after the load.
//
// Shape: runs of 20 spans (a context root span and 19 steps, a third of them model calls,
// 10% of runs failed at the root). Each step holds 30 words drawn log-uniformly from
// w1..w50000 (seeded, BENCH_SEED) — so wN is in about 2.6M/N steps: w1 and w10 are over the
// 200,000 bound, w20 about 120k, w100 about 26k, w1000 about 2.6k, w20000 about 130 — plus its
// run's topic word (topic<run % 10000>, ~95 spans) and, in 1% of steps, the Chinese text
// 明天北京天气预报 (its characters and pairs as words, and the text in its request, for the
// in-order check).
// Queries go through GET /v1/recall (createRecallRoutes over the pg adapter and the real
// tape reader), each 5 times (BENCH_REPEAT) after one warm-up; median and max in milliseconds. "find" is
// the index part alone (the newest 5,001 matches with their runs, each word's steps found
// through the GIN indexes; only past 5,000 the count up to 200,001);
// the rest of "total" is reading how up to 100 runs ended and their outlines (steps without
// prompts and answers, tapes/tape-reader.ts). BENCH_RUN_INDEX=1 adds an index on spans(run_id), which the tape reader's step query
// (tapedeck.tape_steps filtered by its NULLIF'd tenant and run) needs to avoid a scan of
// every span per run read.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPgDatabase } from '../dist/src/store/pg-database.js';
import { migrate } from '../dist/src/store/migrate.js';
import { createMemoryPayloadStore } from '../dist/src/payloads/memory-payload-store.js';
import { createApp } from '../dist/src/api/app.js';
import { silentLogger } from '../dist/src/logger.js';
import { createRecallRoutes } from '../dist/src/recall/routes.js';
import { countMatches, newestMatches, queryWords, rarestFirst } from '../dist/src/recall/query.js';
import { queryTerms } from '../dist/src/recall/tokenize.js';
import { wordHash } from '../dist/src/recall/word-hash.js';
import { copyColumnsOf } from '../dist/src/store/bulk-insert.js';

const serverUrl =
  process.env.TAPEDECK_BENCH_DATABASE_URL ||
  process.env.TAPEDECK_TEST_DATABASE_URL ||
  'postgres://postgres@127.0.0.1:5432/test';
const SPANS = Number(process.env.BENCH_SPANS || 1_000_000);
const PER_RUN = 20;
const RUNS = Math.ceil(SPANS / PER_RUN);
const T0 = 1_700_000_000_000_000_000n;
const REPEAT = Number(process.env.BENCH_REPEAT || 5);
const BATCH_RUNS = 2_000;

// Each step's words: 30 draws (distinct) of w<floor(exp(u * ln 50000))>, u uniform in [0, 1)
// from a seeded generator (BENCH_SEED), its run's topic word, and in 1% of steps the lexemes
// of 明天北京天气预报 (its characters and adjacent pairs, as tokenize.ts indexes it); the same
// steps get that text in their request (CHINESE_SQL, below).
const VOCABULARY = 50_000;
const DRAWS = 30;
const TOPICS = 10_000;
const CHINESE = ['明', '天', '北', '京', '气', '预', '报', '明天', '天北', '北京', '京天', '天气', '气预', '预报'];
const CHINESE_SQL = '(r * 19 + i) % 100 = 7';
const hasChinese = (r, i) => (r * 19 + i) % 100 === 7;

/** mulberry32: uniform in [0, 1), 32 bits */
let seed = Number(process.env.BENCH_SEED || 1) >>> 0;
const random = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
/** each lexeme's hash as lanes (hi, lo), by position */
const lanesOf = (lexemes) => {
  const out = new Int32Array(lexemes.length * 2);
  lexemes.forEach((l, k) => out.set(wordHash(l), k * 2));
  return out;
};
const W_LANES = lanesOf(Array.from({ length: VOCABULARY }, (_, n) => `w${n}`)); // w0 is never drawn
const TOPIC_LANES = lanesOf(Array.from({ length: TOPICS }, (_, n) => `topic${n}`));
const CHINESE_LANES = lanesOf(CHINESE);
const LN_VOCABULARY = Math.log(VOCABULARY);
const drawnIn = new Int32Array(VOCABULARY);
let stepNumber = 0;
const scratch = new Int32Array(2 * (DRAWS + 1 + CHINESE.length));
/** The words of run r's i-th span: distinct lanes, first-use order, in an array of their own. */
const stepWords = (r, i) => {
  stepNumber++;
  let n = 0;
  for (let k = 0; k < DRAWS; k++) {
    const w = Math.floor(Math.exp(random() * LN_VOCABULARY));
    if (drawnIn[w] === stepNumber) continue;
    drawnIn[w] = stepNumber;
    scratch[n++] = W_LANES[w * 2];
    scratch[n++] = W_LANES[w * 2 + 1];
  }
  const topic = r % TOPICS;
  scratch[n++] = TOPIC_LANES[topic * 2];
  scratch[n++] = TOPIC_LANES[topic * 2 + 1];
  if (hasChinese(r, i)) {
    scratch.set(CHINESE_LANES, n);
    n += CHINESE_LANES.length;
  }
  return scratch.slice(0, n);
};
const WORD_COLUMNS = copyColumnsOf([
  { name: 'br', cast: 'integer' },
  { name: 'bi', cast: 'integer' },
  { name: 'words', copy: 'int8[]' },
]);
/** The indexes the load drops and builds again after it. */
const INDEXES = ['steps_words_idx', 'messages_words_idx', 'steps_request_messages_idx'];

const name = `tapedeck_bench_recall_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(serverUrl);
url.pathname = `/${name}`;
const db = createPgDatabase(url.toString(), { maxConnections: 4 });

const timed = async (label, fn) => {
  const t = performance.now();
  const out = await fn();
  console.log(`${label.padEnd(44)} ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return out;
};

try {
  await migrate(db);
  console.log(
    `recall bench: ${SPANS.toLocaleString('en-US')} spans in ${RUNS.toLocaleString('en-US')} runs of ${PER_RUN}, database ${name}`,
  );
  const indexDefs = [];
  for (const index of INDEXES) {
    const [{ def }] = await db.query(`SELECT pg_get_indexdef('tapedeck_store.${index}'::regclass) AS def`);
    indexDefs.push(def);
    await db.query(`DROP INDEX tapedeck_store.${index}`);
  }
  // Recall's words, step by step, in the order ingest would have found them.
  await timed('the words of each step (COPY)', async () => {
    await db.query('CREATE UNLOGGED TABLE bench_words (br integer, bi integer, words bigint[])');
    let pending = Promise.resolve();
    for (let first = 0; first < RUNS; first += BATCH_RUNS) {
      const rows = [];
      for (let r = first; r < Math.min(first + BATCH_RUNS, RUNS); r++) {
        for (let i = 1; i < PER_RUN; i++) rows.push([r, i, stepWords(r, i)]);
      }
      await pending;
      pending = db.transaction((tx) => tx.copyRows('bench_words', WORD_COLUMNS, rows));
    }
    await pending;
    await db.query('CREATE INDEX ON bench_words (br, bi)');
  });
  // A model call's request: one message of its own, holding its words.
  const MESSAGE_SQL = `CASE WHEN ${CHINESE_SQL} THEN '{"content":"明天北京天气预报","n":"' || r || '.' || i || '","role":"user"}'
                            ELSE '{"content":"a recorded prompt","n":"' || r || '.' || i || '","role":"user"}' END`;
  await timed('generating messages', () =>
    db.query(
      `INSERT INTO tapedeck_store.messages (tenant, digest, body, words)
       SELECT '', sha256(convert_to(m.body, 'UTF8')), m.body, w.words
         FROM generate_series(0, $1::int - 1) r CROSS JOIN generate_series(1, ${PER_RUN - 1}) i
        CROSS JOIN LATERAL (SELECT ${MESSAGE_SQL} AS body) m
         JOIN bench_words w ON w.br = r AND w.bi = i
        WHERE i % 3 = 1`,
      [RUNS],
    ),
  );
  await timed('generating spans', () =>
    db.query(
      `
    INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns,
                                      status_code, attributes, events, links, resource, service_name, run_id)
    SELECT '', decode(lpad(to_hex(r), 32, '0'), 'hex'), decode(lpad(to_hex(i + 1), 16, '0'), 'hex'),
           CASE WHEN i = 0 THEN NULL ELSE decode(lpad(to_hex(1), 16, '0'), 'hex') END,
           CASE WHEN i = 0 THEN 'workflow' WHEN i % 3 = 1 THEN 'chat gpt-4o' ELSE 'execute_tool search' END,
           'internal',
           $1::bigint + r::bigint * 60000000000 + i::bigint * 1000000000,
           $1::bigint + r::bigint * 60000000000 + CASE WHEN i = 0 THEN 30000000000 ELSE i::bigint * 1000000000 + 500000000 END,
           CASE WHEN i = 0 AND r % 10 = 3 THEN 'error' ELSE 'ok' END,
           '{}', '[]', '[]', '{}', 'bench', 'run-' || r
      FROM generate_series(0, $2::int - 1) r, generate_series(0, ${PER_RUN - 1}) i`,
      [T0.toString(), RUNS],
    ),
  );
  await timed('generating steps', () =>
    db.query(
      `
    INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, model, tool, status, request, response,
                                      fingerprint, params, layout, normalizer_version, request_messages, words)
    SELECT '', decode(lpad(to_hex(r), 32, '0'), 'hex'), decode(lpad(to_hex(i + 1), 16, '0'), 'hex'),
           CASE WHEN i % 3 = 1 THEN 'llm' ELSE 'tool' END,
           CASE WHEN i % 3 = 1 THEN 'chat gpt-4o' ELSE 'execute_tool search' END,
           CASE WHEN i % 3 = 1 THEN 'gpt-4o' END, CASE WHEN i % 3 = 1 THEN NULL ELSE 'search' END,
           'ok',
           CASE WHEN i % 3 = 1 THEN NULL
                WHEN ${CHINESE_SQL} THEN '[{"content":"明天北京天气预报","role":"user"}]'
                ELSE '[{"content":"a recorded prompt","role":"user"}]' END,
           '[{"content":"a recorded answer","role":"assistant"}]',
           CASE WHEN i % 3 = 1 THEN 'llm:gpt-4o#0123456789abcdef' ELSE 'tool:search#0123456789abcdef' END,
           '{}', 'otel-genai', 1,
           CASE WHEN i % 3 = 1 THEN ARRAY[sha256(convert_to(${MESSAGE_SQL}, 'UTF8'))] END,
           CASE WHEN i % 3 = 1 THEN '{}' ELSE w.words END
      FROM generate_series(0, $1::int - 1) r CROSS JOIN generate_series(1, ${PER_RUN - 1}) i
      JOIN bench_words w ON w.br = r AND w.bi = i`,
      [RUNS],
    ),
  );
  await db.query('DROP TABLE bench_words');
  await timed('building the GIN indexes (words, digest lists)', async () => {
    for (const def of indexDefs) await db.query(def);
  });
  if (process.env.BENCH_RUN_INDEX === '1') {
    await timed('index on spans(run_id) (BENCH_RUN_INDEX=1)', () =>
      db.query('CREATE INDEX bench_spans_run_id ON tapedeck_store.spans (run_id)'),
    );
  }
  await timed('analyze', async () => {
    await db.query('ANALYZE tapedeck_store.spans');
    await db.query('ANALYZE tapedeck_store.steps');
    await db.query('ANALYZE tapedeck_store.messages');
  });
  const [{ size }] = await db.query(
    `SELECT pg_size_pretty(pg_relation_size('tapedeck_store.steps_words_idx') + pg_relation_size('tapedeck_store.messages_words_idx')) AS size`,
  );
  console.log(`GIN index size (words of steps and messages): ${size}`);

  const recallRoutes = createRecallRoutes(
    { db, payloads: createMemoryPayloadStore(), pricing: null },
    { queryDeadlineMs: 60_000, nowNs: () => T0 + BigInt(RUNS + 100) * 60_000_000_000n },
  );
  // Mounted in the application, whose error handler answers the refused queries.
  const app = createApp({ routes: [recallRoutes], ready: async () => ({ ok: true }), logger: silentLogger() });
  const cases = [
    ['rare word (w20000, ~130 spans)', 'w20000'],
    ['topic word (topic42, ~95 spans)', 'topic42'],
    ['mid word (w1000, ~2.6k spans)', 'w1000'],
    ['common word (w100, ~26k spans)', 'w100'],
    ['two words (w100 w200)', 'w100 w200'],
    ['heavy word (w20, ~120k spans)', 'w20'],
    ['too common (w10, refused 400)', 'w10'],
    ['very common (w1, refused 400)', 'w1'],
    ['no match (nothing)', 'nothing'],
    ['Chinese pair (天气, ~9.5k spans)', '天气'],
    ['Chinese run, checked (天气预报)', '天气预报'],
    ['Chinese run + topic (北京天气 topic5)', '北京天气 topic5'],
  ];
  console.log(`${'\nquery'.padEnd(45)}status  runs  trunc   find ms   total median ms   max ms  answer`);
  for (const [label, q] of cases) {
    const path = `/v1/recall?q=${encodeURIComponent(q)}`;
    await (await app.request(path)).text(); // warm-up
    const times = [];
    let status = 0;
    let body = null;
    const answers = new Set();
    for (let k = 0; k < REPEAT; k++) {
      const t = performance.now();
      const res = await app.request(path);
      const text = await res.text();
      answers.add(createHash('sha256').update(text).digest('hex').slice(0, 8));
      body = JSON.parse(text);
      times.push(performance.now() - t);
      status = res.status;
    }
    times.sort((a, b) => a - b);
    const f0 = performance.now();
    // as recall.ts does: in one transaction without JIT or parallel plans, the rarest word
    // first, the newest 5,001 matches, counted (up to 200,001) only past 5,000
    await db.transaction(async (tx) => {
      await tx.query("SELECT set_config('jit', 'off', true), set_config('max_parallel_workers_per_gather', '0', true)");
      const words = await rarestFirst(tx, '', queryWords(queryTerms(q)));
      const newest = await newestMatches(tx, '', words, 5_001);
      if (newest.length > 5_000) await countMatches(tx, '', words, 200_001);
    });
    const find = performance.now() - f0;
    const runs = body.runs ? body.runs.length : '-';
    const trunc = body.truncated === undefined ? '-' : String(body.truncated);
    console.log(
      `${label.padEnd(44)} ${String(status).padEnd(7)} ${String(runs).padEnd(5)} ${trunc.padEnd(6)} ${find.toFixed(1).padStart(8)} ${times[REPEAT >> 1].toFixed(1).padStart(17)} ${times[REPEAT - 1].toFixed(1).padStart(8)}  ${[...answers].join(',')}`,
    );
  }
} finally {
  await db.close();
  if (process.env.BENCH_KEEP !== '1') await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
