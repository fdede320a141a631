// Recall over 1M stored spans of conversations (GET /v1/recall, docs/api.md): every answer
// checked against one computed from the generated runs, and each query's latency.
// Run after `npx tsc -p tsconfig.build.json`:  node bench/recall.mjs
//
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test. A fresh database is created next to it,
// migrated, filled (no ingest: this measures reads) and dropped afterwards (BENCH_KEEP=1
// keeps it; BENCH_DATABASE=<name> queries a kept one instead of building, with the same
// BENCH_SPANS and BENCH_SEED). BENCH_SPANS sets the size (default 1,000,000); BENCH_CASES=text
// runs only the queries whose label holds the text.
//
// Shape (bench/lib/recall-conversations.mjs): runs of 20 spans, a root and 19 model calls
// (span ids distinct across traces, as real ones are, so PostgreSQL plans with real statistics),
// call k sending the system prompt and the run's whole history (u1, a1, ..., uk) and
// receiving ak, as agents do; 10 % of runs failed at the root. Messages are written where
// ingest keeps them: each once in tapedeck_store.messages with its id and words, the calls'
// lists of ids in their steps, the GIN indexes built after the load. The new messages of
// BLOCK_RUNS runs (about a 512-span request's) form a block, as a transaction's do: ids of
// the block, and the words 8 or more of them hold posted (tapedeck_store.message_postings)
// by ingest's own rule (BlockWords), the others in each message's words. Each message holds 15 words
// drawn log-uniformly from w1..w1000000 (seeded, BENCH_SEED), the first its run's topic
// word, some a phrase of the recall tests' fixtures or Chinese text.
//
// Every query of the recall tests and the bench's own classes go through GET /v1/recall
// (createRecallRoutes over the pg adapter and the real tape reader, limit 100), each 5 times
// (BENCH_REPEAT) after one warm-up; median and max in milliseconds. "find" is the index part
// alone (the matches counted, the newest 5,001 with their runs). Each answer (status, runs,
// outcomes, scores, last ends, steps, truncated) and each query's count of matching calls (up
// to maxTotalMatches + 1, where recall stops counting) is compared with the generated runs'
// own; the bench
// exits non-zero when one differs.
import { createHash, randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPgDatabase } from '../dist/src/store/pg-database.js';
import { migrate } from '../dist/src/store/migrate.js';
import { createMemoryPayloadStore } from '../dist/src/payloads/memory-payload-store.js';
import { createApp } from '../dist/src/api/app.js';
import { silentLogger } from '../dist/src/logger.js';
import { createRecallRoutes } from '../dist/src/recall/routes.js';
import { firstMatches, queryWords, rarestFirst } from '../dist/src/recall/query.js';
import { DEFAULT_RECALL_BOUNDS } from '../dist/src/recall/types.js';
import { queryTerms } from '../dist/src/recall/tokenize.js';
import { wordIds, wordId } from '../dist/src/recall/word-hash.js';
import { BLOCK_SIZE, BlockWords } from '../dist/src/tapes/message-rows.js';
import {
  CALLS,
  PER_RUN,
  RUN_NS,
  STEP_NAME,
  T0,
  conversationRuns,
  createOracle,
  stepWords,
  systemMessage,
} from './lib/recall-conversations.mjs';

const serverUrl =
  process.env.TAPEDECK_BENCH_DATABASE_URL ||
  process.env.TAPEDECK_TEST_DATABASE_URL ||
  'postgres://postgres@127.0.0.1:5432/test';
const SPANS = Number(process.env.BENCH_SPANS || 1_000_000);
const RUNS = Math.ceil(SPANS / PER_RUN);
const SEED = Number(process.env.BENCH_SEED || 1);
const REPEAT = Number(process.env.BENCH_REPEAT || 5);
const SYSTEM_ID = 1;

/** Message ids as an int8[] value for binary COPY: their 32-bit halves. */
const idArray = (ids) => Int32Array.from(ids.flatMap((id) => [Math.floor(id / 2 ** 32), (id % 2 ** 32) | 0]));
const BATCH_RUNS = 1_000;
/** Runs whose new messages form a block: 513 calls, a 512-span request's worth. */
const BLOCK_RUNS = 27;

/** The bench's own classes (counts at 1M spans, seed 1), then every query of the recall tests. */
const CASES = [
  ['rare word (w200000, 140 calls)', 'w200000'],
  ['topic word (topic42, 95)', 'topic42'],
  ['mid word (w8000, 2.6k)', 'w8000'],
  ['common word (w800, 26k)', 'w800'],
  ['two common words (w800 w1000)', 'w800 w1000'],
  ['heavy word (w150, 125k)', 'w150'],
  ['too common (w10, 738k, refused)', 'w10'],
  ['very common (w1, 936k, refused)', 'w1'],
  ['in every call (patient, refused)', 'patient'],
  ['no match (nothing)', 'nothing'],
  ['Chinese pair (天气, 24k)', '天气'],
  ['Chinese run, checked (天气预报)', '天气预报'],
  ['Chinese run + topic (北京天气 topic237)', '北京天气 topic237'],
  ...[
    'weather Paris',
    'paris weather',
    'weather',
    'umbrella',
    'drizzle',
    'DRIZZLE',
    'umbrella drizzle',
    'umbrella zeppelin',
    'quokka',
    'w10 w20000',
    'w149999',
    'quixotic',
    'zeppelin',
    'zeppelin lyon',
    'shops',
    'shop',
    'shops reviews',
    'get_weather',
    'get_weather reviews',
    'barometer',
    'read_barometer',
    'picnic',
    '天气',
    '天气预报',
    '北京天气',
    '北京 天气',
    '小雨',
    '北京下雨',
    '上海天气预报',
    'القاهرة الطقس',
    'القاهرة',
    'مُشْمِس',
    'غدا',
    'zanzibar',
    'ignore previous instructions',
    'weather zyzzyvaquux',
    'nothing',
  ]
    .filter((q) => !['天气', '天气预报', 'nothing'].includes(q))
    .map((q) => [`test: ${q}`, q]),
];

const timed = async (label, fn) => {
  const t = performance.now();
  const out = await fn();
  console.log(`${label.padEnd(44)} ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return out;
};

const admin = new pg.Client({ connectionString: serverUrl });
await admin.connect();
const reuse = process.env.BENCH_DATABASE;
const name = reuse || `tapedeck_bench_recall_${randomBytes(4).toString('hex')}`;
if (!reuse) await admin.query(`CREATE DATABASE ${name}`);
const url = new URL(serverUrl);
url.pathname = `/${name}`;
const db = createPgDatabase(url.toString(), { maxConnections: 4, queryTimeoutMillis: 3_600_000 });
const oracle = createOracle(
  CASES.map(([, q]) => q),
  RUNS,
);
let differ = 0;
let asked = 0;

try {
  console.log(
    `recall bench: ${SPANS.toLocaleString('en-US')} spans in ${RUNS.toLocaleString('en-US')} conversations of ${CALLS} calls, database ${name}${reuse ? ' (kept)' : ''}`,
  );
  if (reuse) await timed('the runs, for the answers (no writes)', () => generate(null));
  else await build();

  const recallRoutes = createRecallRoutes(
    { db, payloads: createMemoryPayloadStore(), pricing: null },
    { queryDeadlineMs: 120_000, nowNs: () => T0 + BigInt(RUNS + 100) * RUN_NS },
  );
  // Mounted in the application, whose error handler answers the refused queries.
  const app = createApp({ routes: [recallRoutes], ready: async () => ({ ok: true }), logger: silentLogger() });
  console.log(`${'\nquery'.padEnd(45)}status  runs  trunc    calls   find ms   total median ms   max ms  answer`);
  for (const [label, q] of CASES) {
    if (process.env.BENCH_CASES && !label.includes(process.env.BENCH_CASES)) continue;
    asked++;
    const path = `/v1/recall?q=${encodeURIComponent(q)}&limit=100`;
    await (await app.request(path)).text(); // warm-up
    const times = [];
    const answers = new Set();
    let status = 0;
    let body = null;
    for (let k = 0; k < REPEAT; k++) {
      const t = performance.now();
      const res = await app.request(path);
      const text = await res.text();
      times.push(performance.now() - t);
      answers.add(createHash('sha256').update(text).digest('hex').slice(0, 8));
      body = JSON.parse(text);
      status = res.status;
    }
    times.sort((a, b) => a - b);
    const f0 = performance.now();
    // as recall.ts does (its sessions without JIT or parallel plans): the rarest word first,
    // the matches counted and the newest 5,001 of them
    const words = await rarestFirst(db, '', queryWords(queryTerms(q)));
    const { total } = await firstMatches(db, '', words, 5_001, DEFAULT_RECALL_BOUNDS.maxTotalMatches);
    const find = performance.now() - f0;
    const expected = oracle.answer(q, DEFAULT_RECALL_BOUNDS);
    const same = answers.size === 1 && sameAnswer(status, body, total, expected);
    if (!same) differ++;
    const runs = body.runs ? body.runs.length : '-';
    const trunc = body.truncated === undefined ? '-' : String(body.truncated);
    console.log(
      `${label.padEnd(44)} ${String(status).padEnd(7)} ${String(runs).padEnd(5)} ${trunc.padEnd(6)} ${String(total).padStart(7)} ${find.toFixed(1).padStart(9)} ${times[REPEAT >> 1].toFixed(1).padStart(17)} ${times[REPEAT - 1].toFixed(1).padStart(8)}  ${same ? 'same' : `DIFFERS (expected ${expected.status}, ${expected.count} calls, ${expected.runs?.length ?? '-'} runs)`}`,
    );
  }
  console.log(
    differ === 0
      ? `\nevery answer identical to the generated runs' (${asked} queries)`
      : `\n${differ} of ${asked} answers differ from the generated runs'`,
  );
} finally {
  await db.close();
  if (process.env.BENCH_KEEP !== '1' && !reuse) await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}
process.exitCode = differ === 0 ? 0 : 1;

function sameAnswer(status, body, total, expected) {
  // a query matching too many is counted only until it is refused
  const counted = Math.min(expected.count, DEFAULT_RECALL_BOUNDS.maxTotalMatches + 1);
  if (status !== expected.status || total !== counted) return false;
  if (status !== 200) return body.error?.type === 'query_too_broad';
  const got = body.runs.map((r) => ({
    run: r.run,
    outcome: r.outcome,
    score: r.score,
    last_end_ns: String(r.last_end_ns),
    steps: r.steps,
  }));
  return body.truncated === expected.truncated && JSON.stringify(got) === JSON.stringify(expected.runs);
}

/** Generates the runs (the answers follow them); with a transaction, also writes them. */
async function generate(tx) {
  const MESSAGE_COLUMNS = [
    { name: 'tenant', type: 'text' },
    { name: 'id', type: 'int8' },
    { name: 'digest', type: 'bytea' },
    { name: 'body', type: 'text' },
    { name: 'words', type: 'int8[]' },
  ];
  const CALL_COLUMNS = [
    { name: 'r', type: 'int4' },
    { name: 'k', type: 'int4' },
    { name: 'request_messages', type: 'int8[]' },
    { name: 'response_messages', type: 'int8[]' },
  ];
  const POSTING_COLUMNS = [
    { name: 'tenant', type: 'text' },
    { name: 'word', type: 'int8' },
    { name: 'block', type: 'int8' },
    { name: 'bits', type: 'bytea' },
  ];
  let messages = [];
  let calls = [];
  let postings = [];
  let blockRuns = [];
  const flush = async () => {
    if (tx) {
      await tx.copyRows('tapedeck_store.messages', MESSAGE_COLUMNS, messages);
      await tx.copyRows('bench_calls', CALL_COLUMNS, calls);
      await tx.copyRows('tapedeck_store.message_postings', POSTING_COLUMNS, postings);
    }
    messages = [];
    calls = [];
    postings = [];
  };
  // ids of blocks as ingest gives them, the system prompt's (1) below the first
  let nextBlock = 1;
  const writeBlock = () => {
    const split = new BlockWords();
    for (const [, run] of blockRuns) for (const m of run) split.add(m.words);
    split.finish();
    const block = nextBlock++;
    let position = 0;
    for (const [r, run] of blockRuns) {
      const start = position;
      const ids = run.map(() => block * BLOCK_SIZE + position++);
      run.forEach((m, i) => messages.push(['', ids[i], m.digest, m.body, split.wordsOf(start + i)]));
      const history = [SYSTEM_ID];
      for (let k = 1; k <= CALLS; k++) {
        history.push(ids[2 * k - 2]);
        calls.push([r, k, idArray(history), idArray([ids[2 * k - 1]])]);
        history.push(ids[2 * k - 1]);
      }
    }
    const { words, lengths, bits } = split.postings(new Uint8Array(position).fill(1));
    let at = 0;
    lengths.forEach((length, j) => {
      postings.push(['', wordId(words[2 * j], words[2 * j + 1]), block, bits.subarray(at, at + length)]);
      at += length;
    });
    blockRuns = [];
  };
  let r = 0;
  for (const run of conversationRuns(SEED, RUNS)) {
    oracle.observe(r, run);
    if (tx) {
      blockRuns.push([r, run]);
      if (blockRuns.length === BLOCK_RUNS) writeBlock();
    }
    if (++r % BATCH_RUNS === 0) await flush();
  }
  if (blockRuns.length > 0) writeBlock();
  await flush();
  if (tx) await tx.query("SELECT setval('tapedeck_store.message_blocks', $1::bigint)", [nextBlock]);
}

async function build() {
  await migrate(db);
  // The indexes the load drops and builds again after it.
  const indexDefs = [];
  for (const index of [
    'steps_words_idx',
    'messages_words_idx',
    'steps_request_messages_idx',
    'steps_response_messages_idx',
  ]) {
    const [{ def }] = await db.query(`SELECT pg_get_indexdef('tapedeck_store.${index}'::regclass) AS def`);
    indexDefs.push(def);
    await db.query(`DROP INDEX tapedeck_store.${index}`);
  }
  await db.query(
    'CREATE UNLOGGED TABLE bench_calls (r integer, k integer, request_messages bigint[], response_messages bigint[])',
  );
  await timed('messages and their lists (COPY)', () =>
    db.transaction(async (tx) => {
      await tx.query(
        `INSERT INTO tapedeck_store.messages (tenant, id, digest, body, words) VALUES ('', $1, $2, $3, $4::bigint[])`,
        [SYSTEM_ID, systemMessage.digest, systemMessage.body, wordIds(systemMessage.words)],
      );
      await generate(tx);
    }),
  );
  await timed('spans', () =>
    db.query(
      `INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns,
                                         status_code, attributes, events, links, resource, service_name, run_id)
       SELECT '', decode(lpad(to_hex(r), 32, '0'), 'hex'), decode(lpad(to_hex(r::bigint * ${PER_RUN} + i + 1), 16, '0'), 'hex'),
              CASE WHEN i = 0 THEN NULL ELSE decode(lpad(to_hex(r::bigint * ${PER_RUN} + 1), 16, '0'), 'hex') END,
              CASE WHEN i = 0 THEN 'invoke_agent chat_agent' ELSE $4 END,
              CASE WHEN i = 0 THEN 'internal' ELSE 'client' END,
              $1::bigint + r::bigint * $3::bigint + i::bigint * 1000000000,
              $1::bigint + r::bigint * $3::bigint + CASE WHEN i = 0 THEN 30000000000 ELSE i::bigint * 1000000000 + 500000000 END,
              CASE WHEN i = 0 AND r % 10 = 3 THEN 'error' ELSE 'ok' END,
              '{}', '[]', '[]', '{}', 'bench', 'run-' || r
         FROM generate_series(0, $2::int - 1) r, generate_series(0, ${PER_RUN - 1}) i`,
      [T0.toString(), RUNS, RUN_NS.toString(), STEP_NAME],
    ),
  );
  await timed('steps', () =>
    db.query(
      `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, model, status, fingerprint, params,
                                         layout, normalizer_version, request_messages, response_messages, words)
       SELECT '', decode(lpad(to_hex(r), 32, '0'), 'hex'), decode(lpad(to_hex(r::bigint * ${PER_RUN} + k + 1), 16, '0'), 'hex'),
              'llm', $1, 'gpt-4o', 'ok', 'llm:gpt-4o#0123456789abcdef', '{}', 'otel-genai', 1,
              request_messages, response_messages, $2::bigint[]
         FROM bench_calls`,
      [STEP_NAME, wordIds(stepWords)],
    ),
  );
  await db.query('DROP TABLE bench_calls');
  await timed('building the GIN indexes (words, message lists)', async () => {
    for (const def of indexDefs) {
      await db.transaction(async (tx) => {
        await tx.query("SELECT set_config('maintenance_work_mem', '1GB', true)");
        await tx.query(def);
      });
    }
  });
  await timed('analyze', async () => {
    for (const t of ['spans', 'steps', 'messages', 'message_postings']) await db.query(`ANALYZE tapedeck_store.${t}`);
  });
  const [sizes] = await db.query(
    `SELECT pg_size_pretty(pg_total_relation_size('tapedeck_store.messages')) AS messages,
            pg_size_pretty(pg_total_relation_size('tapedeck_store.steps')) AS steps,
            pg_size_pretty(pg_relation_size('tapedeck_store.steps_request_messages_idx')) AS lists,
            pg_size_pretty(pg_relation_size('tapedeck_store.messages_words_idx')) AS words,
            pg_size_pretty(pg_total_relation_size('tapedeck_store.message_postings')) AS postings`,
  );
  console.log(
    `messages ${sizes.messages}, steps ${sizes.steps} (with indexes); GIN: request lists ${sizes.lists}, messages' words ${sizes.words}; postings ${sizes.postings} (with indexes)`,
  );
}
