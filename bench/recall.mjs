// Recall latency over 1M stored spans (GET /v1/recall, docs/api.md).
// Run after `npx tsc -p tsconfig.build.json`:  node bench/recall.mjs
//
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test. A fresh database is created next to it,
// migrated, filled (no ingest: this measures reads) and dropped afterwards (BENCH_KEEP=1
// keeps it). BENCH_SPANS sets the size (default 1,000,000). Spans and steps are made in SQL
// (generate_series); recall's index (tapedeck_store.trace_words: rows of up to 64 steps written
// together, their words as 64-bit hashes and, per word, which steps hold it) is made in JS:
// each step's words are drawn and hashed (recall/word-hash.ts), and the runs' steps go into
// rows through TraceWords and writeTraceWords (recall/trace-words.ts, binary COPY), run by run
// as ingest packs the runs sent in one request. The GIN index on its words is built after the load.
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
// the index part alone (candidate traces from the words index, their steps tested; the index's
// upper bound, then, only past 200,000, the exact count up to 200,001, then the newest 5,001 matches with their runs);
// the rest of "total" is reading how up to 100 runs ended and their outlines (steps without
// prompts and answers, tapes/tape-reader.ts). BENCH_RUN_INDEX=1 adds an index on spans(run_id), which the tape reader's step query
// (tapedeck.tape_steps filtered by its NULLIF'd tenant and run) needs to avoid a scan of
// every span per run read.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPgDatabase } from '../dist/src/store/pg-database.js';
import { migrate } from '../dist/src/store/migrate.js';
import { createMemoryPayloadStore } from '../dist/src/payloads/memory-payload-store.js';
import { createApp } from '../dist/src/api/app.js';
import { silentLogger } from '../dist/src/logger.js';
import { createRecallRoutes } from '../dist/src/recall/routes.js';
import { candidateStepBound, countMatches, newestMatches, queryWords } from '../dist/src/recall/query.js';
import { queryTerms } from '../dist/src/recall/tokenize.js';
import { TraceWords, writeTraceWords } from '../dist/src/recall/trace-words.js';
import { wordHash } from '../dist/src/recall/word-hash.js';

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
/** The words of run r's i-th span: distinct lanes, first-use order, in an array of their own (TraceWords keeps it). */
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
/** span ids as the SQL makes them: decode(lpad(to_hex(i + 1), 16, '0'), 'hex') */
const SPAN_IDS = Array.from({ length: PER_RUN }, (_, i) => (i + 1).toString(16).padStart(16, '0'));

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
  await db.query('DROP INDEX tapedeck_store.trace_words_words_idx');
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
                                      fingerprint, params, layout, normalizer_version)
    SELECT '', decode(lpad(to_hex(r), 32, '0'), 'hex'), decode(lpad(to_hex(i + 1), 16, '0'), 'hex'),
           CASE WHEN i % 3 = 1 THEN 'llm' ELSE 'tool' END,
           CASE WHEN i % 3 = 1 THEN 'chat gpt-4o' ELSE 'execute_tool search' END,
           CASE WHEN i % 3 = 1 THEN 'gpt-4o' END, CASE WHEN i % 3 = 1 THEN NULL ELSE 'search' END,
           'ok',
           CASE WHEN ${CHINESE_SQL} THEN '[{"role": "user", "content": "明天北京天气预报"}]'::jsonb
                ELSE '[{"role": "user", "content": "a recorded prompt"}]'::jsonb END,
           '[{"role": "assistant", "content": "a recorded answer"}]'::jsonb,
           CASE WHEN i % 3 = 1 THEN 'llm:gpt-4o#0123456789abcdef' ELSE 'tool:search#0123456789abcdef' END,
           '{}', 'otel-genai', 1
      FROM generate_series(0, $1::int - 1) r, generate_series(1, ${PER_RUN - 1}) i`,
      [RUNS],
    ),
  );
  // Recall's index rows (src/recall/trace-words.ts): up to 64 steps each, run by run, with
  // their words (hashes), as ingest packs the runs sent in one request. The words are drawn here
  // and written with TraceWords and writeTraceWords (binary COPY), BATCH_RUNS runs per
  // transaction; the next batch is drawn while the last one is copied.
  await timed('the words of each run (TraceWords, COPY)', async () => {
    let pending = Promise.resolve();
    for (let first = 0; first < RUNS; first += BATCH_RUNS) {
      const words = new TraceWords();
      for (let r = first; r < Math.min(first + BATCH_RUNS, RUNS); r++) {
        const traceId = r.toString(16).padStart(32, '0');
        for (let i = 1; i < PER_RUN; i++) words.add({ traceId, spanId: SPAN_IDS[i], words: stepWords(r, i) });
      }
      await pending;
      pending = db.transaction((tx) => writeTraceWords(tx, '', words));
    }
    await pending;
  });
  await timed('building the GIN index on trace_words.words', () =>
    db.query('CREATE INDEX trace_words_words_idx ON tapedeck_store.trace_words USING gin (words)'),
  );
  if (process.env.BENCH_RUN_INDEX === '1') {
    await timed('index on spans(run_id) (BENCH_RUN_INDEX=1)', () =>
      db.query('CREATE INDEX bench_spans_run_id ON tapedeck_store.spans (run_id)'),
    );
  }
  await timed('analyze', async () => {
    await db.query('ANALYZE tapedeck_store.spans');
    await db.query('ANALYZE tapedeck_store.steps');
    await db.query('ANALYZE tapedeck_store.trace_words');
  });
  const [{ size }] = await db.query(
    `SELECT pg_size_pretty(pg_relation_size('tapedeck_store.trace_words_words_idx')) AS size`,
  );
  console.log(`GIN index size: ${size}`);

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
  console.log(`${'\nquery'.padEnd(45)}status  runs  trunc   find ms   total median ms   max ms`);
  for (const [label, q] of cases) {
    const path = `/v1/recall?q=${encodeURIComponent(q)}`;
    await (await app.request(path)).text(); // warm-up
    const times = [];
    let status = 0;
    let body = null;
    for (let k = 0; k < REPEAT; k++) {
      const t = performance.now();
      const res = await app.request(path);
      body = JSON.parse(await res.text());
      times.push(performance.now() - t);
      status = res.status;
    }
    times.sort((a, b) => a - b);
    const words = queryWords(queryTerms(q));
    const f0 = performance.now();
    // as recall.ts does: the index's bound first, the exact count only past the limit
    const broad =
      (await candidateStepBound(db, '', words)) > 200_000 && (await countMatches(db, '', words, 200_001)) > 200_000;
    if (!broad) await newestMatches(db, '', words, 5_001);
    const find = performance.now() - f0;
    const runs = body.runs ? body.runs.length : '-';
    const trunc = body.truncated === undefined ? '-' : String(body.truncated);
    console.log(
      `${label.padEnd(44)} ${String(status).padEnd(7)} ${String(runs).padEnd(5)} ${trunc.padEnd(6)} ${find.toFixed(1).padStart(8)} ${times[REPEAT >> 1].toFixed(1).padStart(17)} ${times[REPEAT - 1].toFixed(1).padStart(8)}`,
    );
  }
} finally {
  await db.close();
  if (process.env.BENCH_KEEP !== '1') await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
