// Dataset export at scale: memory stays flat while 100k runs stream
// out, and the skip counts add up (exported + skipped = considered).
//
//   npx tsc -p tsconfig.build.json && node bench/dataset.mjs [--runs 100000] [--page 200]
//
// Needs a PostgreSQL server (TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test); creates a scratch database and drops it.
// Runs are written straight into the tables with SQL (one statement per 10k runs for spans,
// one for steps), twelve shapes in turn, the same as test/unit/runs/synthetic-runs.ts: five
// complete, one per skip reason, one exported through id-less tool calls. The export writes
// the JSONL to a temporary file through a write stream (with backpressure), and RSS and heap
// are sampled every 5,000 runs. Prints one row per sample and the counts.
import { createWriteStream, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { createPgDatabase } from '../dist/src/store/pg-database.js';
import { migrate } from '../dist/src/store/migrate.js';
import { createMemoryPayloadStore } from '../dist/src/payloads/memory-payload-store.js';
import { chatDatasetLines, emptySummary } from '../dist/src/runs/dataset.js';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 100_000);
const PAGE = arg('page', 200);
const SAMPLE_EVERY = 5_000;
const server =
  process.env.TAPEDECK_BENCH_DATABASE_URL ||
  process.env.TAPEDECK_TEST_DATABASE_URL ||
  'postgres://postgres@127.0.0.1:5432/test';
const BASE_NS = 1_764_460_800_000_000_000n;
const MB = (n) => (n / 1024 / 1024).toFixed(1);

async function insertRuns(db, first, last, nowNs) {
  const runs = `SELECT i, i % 12 AS k, 'synth-' || lpad(i::text, 7, '0') AS run,
       decode(lpad(to_hex(i), 32, '0'), 'hex') AS trace_id,
       CASE WHEN i % 12 = 8 THEN $4::bigint ELSE $5::bigint + i::bigint * 1000000 END AS t0
     FROM generate_series($2::int, $3::int) AS i`;
  const spans = `SELECT r.*, j, decode(lpad(to_hex(j + 1), 16, '0'), 'hex') AS span_id
     FROM (${runs}) r CROSS JOIN generate_series(0, 3) AS j WHERE NOT (j = 3 AND r.k = 6)`;
  const params = ['', first, last, nowNs.toString(), BASE_NS.toString()];
  await db.query(
    `INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns,
       status_code, attributes, events, links, resource, own_run, run_id)
     SELECT $1, trace_id, span_id, CASE WHEN j = 0 THEN NULL ELSE decode('0000000000000001', 'hex') END,
       CASE j WHEN 0 THEN 'invoke_agent synth' WHEN 2 THEN 'execute_tool get_weather' ELSE 'chat gpt-4o-mini' END,
       CASE WHEN j IN (1, 3) THEN 'client' ELSE 'internal' END,
       t0 + j * 100000, t0 + CASE WHEN j = 0 THEN 900000 ELSE j * 100000 + 50000 END,
       CASE WHEN j = 0 AND k = 7 THEN 'error' ELSE 'unset' END, '{}', '[]', '[]', '{}', CASE WHEN j = 0 THEN run END, run
     FROM (${spans}) s`,
    params,
  );
  const sys = `jsonb_build_object('role', 'system', 'content', 'Be brief.')`;
  const user = `jsonb_build_object('role', 'user', 'content', 'Weather in Paris? #' || i)`;
  const callId = `CASE WHEN k = 11 THEN NULL ELSE 'call_' || i END`;
  const asked = `jsonb_strip_nulls(jsonb_build_object('role', 'assistant', 'tool_calls', jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
      'id', ${callId}, 'name', 'get_weather', 'arguments', jsonb_build_object('city', 'Paris'))))))`;
  const result = `jsonb_build_object('city', 'Paris', 'temperature_c', i % 30)`;
  const sent = `jsonb_strip_nulls(jsonb_build_object('role', 'tool', 'tool_call_id', ${callId}, 'content', ${result}))`;
  const answer = (text) =>
    `jsonb_build_array(jsonb_build_object('role', 'assistant', 'content', ${text}, 'finish_reason', 'stop'))`;
  await db.query(
    `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, model, tool, status, request, response,
       fingerprint, layout, normalizer_version)
     SELECT $1, trace_id, span_id,
       CASE j WHEN 0 THEN 'agent' WHEN 2 THEN 'tool' ELSE 'llm' END,
       CASE j WHEN 0 THEN 'synth' WHEN 2 THEN 'get_weather' ELSE 'chat gpt-4o-mini' END,
       CASE WHEN j IN (1, 3) THEN 'gpt-4o-mini' END, CASE WHEN j = 2 THEN 'get_weather' END,
       CASE WHEN j = 0 AND k = 7 THEN 'error' ELSE 'ok' END,
       CASE
         WHEN j = 0 THEN NULL
         WHEN j = 2 THEN jsonb_build_object('city', 'Paris')
         WHEN j = 1 AND k = 5 THEN NULL
         WHEN j = 1 AND k = 10 THEN '{"$payload": "sha256/${'0'.repeat(64)}"}'::jsonb
         WHEN j = 1 THEN jsonb_build_array(${sys}, ${user})
         WHEN k = 9 THEN jsonb_build_array(${sys}, ${user}, jsonb_build_object('role', 'tool', 'tool_call_id', 'orphan', 'content', ${result}))
         WHEN k = 11 THEN jsonb_build_array(${sent})
         ELSE jsonb_build_array(${sys}, ${user}, ${asked}, ${sent})
       END,
       CASE
         WHEN j = 0 OR (j = 1 AND k = 5) THEN NULL
         WHEN j = 2 THEN ${result}
         WHEN j = 1 THEN jsonb_build_array(${asked} || '{"finish_reason": "tool_calls"}'::jsonb)
         ELSE ${answer(`'Paris is ' || (i % 30) || '°C.'`)}
       END,
       'x', 'otel-genai', 1
     FROM (${spans}) s`,
    params,
  );
}

const name = `tapedeck_bench_${randomBytes(4).toString('hex')}`;
const admin = new pg.Client({ connectionString: server });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
await admin.end();
const url = new URL(server);
url.pathname = `/${name}`;
const db = createPgDatabase(url.toString(), { maxConnections: 2 });
const out = path.join(os.tmpdir(), `${name}.jsonl`);
try {
  await migrate(db);
  let t = performance.now();
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  for (let first = 0; first < RUNS; first += 10_000)
    await insertRuns(db, first, Math.min(RUNS, first + 10_000) - 1, nowNs);
  await db.query('ANALYZE');
  console.log(
    `inserted ${RUNS} runs (${RUNS * 4 - Math.ceil(RUNS / 12)} spans) in ${((performance.now() - t) / 1000).toFixed(1)} s`,
  );

  const summary = emptySummary();
  const samples = [];
  const sample = () => {
    const m = process.memoryUsage();
    samples.push({ considered: summary.considered, rss: m.rss, heap: m.heapUsed });
  };
  const file = createWriteStream(out);
  t = performance.now();
  sample();
  let next = SAMPLE_EVERY;
  const deps = { db, payloads: createMemoryPayloadStore() };
  for await (const line of chatDatasetLines(deps, '', { since: null, until: null, outcome: 'success' }, summary, {
    pageSize: PAGE,
  })) {
    if (!file.write(line)) await once(file, 'drain');
    if (summary.considered >= next) {
      sample();
      next += SAMPLE_EVERY;
    }
  }
  file.end();
  await once(file, 'finish');
  sample();
  const seconds = (performance.now() - t) / 1000;

  console.log('\nconsidered   rss MB   heap MB');
  for (const s of samples)
    console.log(`${String(s.considered).padStart(10)}   ${MB(s.rss).padStart(6)}   ${MB(s.heap).padStart(7)}`);
  const after = samples.filter((s) => s.considered >= SAMPLE_EVERY);
  const rss = after.map((s) => s.rss);
  console.log(
    `\nRSS after the first ${SAMPLE_EVERY} runs: min ${MB(Math.min(...rss))} MB, max ${MB(Math.max(...rss))} MB (spread ${MB(Math.max(...rss) - Math.min(...rss))} MB)`,
  );
  const skipped = Object.values(summary.skipped).reduce((a, b) => a + b, 0);
  console.log(
    `exported ${summary.exported} + skipped ${skipped} = ${summary.exported + skipped}; considered ${summary.considered}: ${summary.exported + skipped === summary.considered ? 'adds up' : 'DOES NOT ADD UP'}`,
  );
  console.log(`skipped by reason: ${JSON.stringify(summary.skipped)}`);
  console.log(
    `${(summary.considered / seconds).toFixed(0)} runs/s, ${seconds.toFixed(1)} s, ${MB(statSync(out).size)} MB of JSONL`,
  );
  if (summary.exported + skipped !== summary.considered || summary.considered !== RUNS) process.exitCode = 1;
} finally {
  await db.close();
  rmSync(out, { force: true });
  const c = new pg.Client({ connectionString: server });
  await c.connect();
  await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await c.end();
}
