// How long the heaviest migrations take on a large store: a fresh database is migrated up to
// 0008 (BENCH_FROM=6: up to 0006, so that 0007 rewrites the steps table too), filled with
// BENCH_SPANS spans (default 1,000,000: runs of 20, a context root and 19 steps, each step
// with a short prompt and answer) in SQL (generate_series), then the migrations after it are
// applied as a start of tapedeck applies them (migrate(), untimed). 0009 rewrites the steps
// table (request and response from json to text) and rebuilds the views over it. Not part of
// `npm test` or `npm run bench`; docs/deploy.md has the figures.
//
// Run after `npm run build`:  node scripts/migration-timing.mjs
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test. The database is dropped afterwards
// (BENCH_KEEP=1 keeps it).
import os from 'node:os';
import { openScratchDatabase } from '../bench/lib/scratch-database.mjs';
import { createPgDatabase } from '../dist/src/store/pg-database.js';
import { loadMigrations, migrate } from '../dist/src/store/migrate.js';

const server =
  process.env.TAPEDECK_BENCH_DATABASE_URL ??
  process.env.TAPEDECK_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const SPANS = Number(process.env.BENCH_SPANS ?? 1_000_000);
const PER_RUN = 20;
const RUNS = Math.ceil(SPANS / PER_RUN);
const BEFORE = Number(process.env.BENCH_FROM ?? 8);

const scratch = await openScratchDatabase('migration', server);
const db = createPgDatabase(scratch.url, { maxConnections: 2 });

async function timed(what, work) {
  const start = performance.now();
  const value = await work();
  const s = (performance.now() - start) / 1000;
  console.log(`${what}: ${s.toFixed(1)} s`);
  return { value, s };
}

try {
  const [{ version }] = await db.query('SELECT version()');
  console.log(
    `machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; ${version}`,
  );
  const all = loadMigrations();
  await migrate(
    db,
    all.filter((m) => m.version <= BEFORE),
  );
  await timed(`generating ${(RUNS * PER_RUN).toLocaleString('en-US')} spans`, () =>
    db.query(
      `INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns,
                                         status_code, attributes, events, links, resource, service_name, run_id)
       SELECT '', decode(lpad(to_hex(r), 32, '0'), 'hex'), decode(lpad(to_hex(i + 1), 16, '0'), 'hex'),
              CASE WHEN i = 0 THEN NULL ELSE decode(lpad(to_hex(1), 16, '0'), 'hex') END,
              CASE WHEN i = 0 THEN 'workflow' WHEN i % 3 = 1 THEN 'chat gpt-4o' ELSE 'execute_tool search' END,
              'internal', 1700000000000000000 + r::bigint * 60000000000 + i::bigint * 1000000000,
              1700000000000000000 + r::bigint * 60000000000 + i::bigint * 1000000000 + 500000000,
              'ok', '{"gen_ai.operation.name": "chat"}', '[]', '[]', '{"service.name": "bench"}', 'bench', 'run-' || r
         FROM generate_series(0, $1::int - 1) r, generate_series(0, ${PER_RUN - 1}) i`,
      [RUNS],
    ),
  );
  await timed(`generating ${(RUNS * (PER_RUN - 1)).toLocaleString('en-US')} steps`, () =>
    db.query(
      `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, model, tool, status, request, response,
                                         fingerprint, params, layout, normalizer_version)
       SELECT '', decode(lpad(to_hex(r), 32, '0'), 'hex'), decode(lpad(to_hex(i + 1), 16, '0'), 'hex'),
              CASE WHEN i % 3 = 1 THEN 'llm' ELSE 'tool' END,
              CASE WHEN i % 3 = 1 THEN 'chat gpt-4o' ELSE 'execute_tool search' END,
              CASE WHEN i % 3 = 1 THEN 'gpt-4o' END, CASE WHEN i % 3 = 1 THEN NULL ELSE 'search' END, 'ok',
              json_build_array(json_build_object('role', 'user', 'content', 'run ' || r || ' step ' || i || ': ' || repeat('a recorded prompt ', 12))),
              json_build_array(json_build_object('role', 'assistant', 'content', 'a recorded answer ' || r)),
              'llm:gpt-4o#0123456789abcdef', '{}', 'otel-genai', 1
         FROM generate_series(0, $1::int - 1) r, generate_series(1, ${PER_RUN - 1}) i`,
      [RUNS],
    ),
  );
  await db.query('VACUUM ANALYZE tapedeck_store.steps');
  const [{ size }] = await db.query("SELECT pg_size_pretty(pg_total_relation_size('tapedeck_store.steps')) AS size");
  console.log(`steps table: ${size}`);
  const { value: applied, s } = await timed(`applying the migrations after ${String(BEFORE).padStart(4, '0')}`, () =>
    migrate(db, all),
  );
  console.log(`applied ${applied.join(', ')} in ${s.toFixed(1)} s`);
} finally {
  await db.close();
  await scratch.cleanup();
}
