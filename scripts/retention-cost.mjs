// What erasure and retention cost on a large store: a fresh, migrated database is filled in SQL
// (generate_series) with BENCH_SPANS spans (default 1,000,000: runs of 20 spans, a context root
// and 19 steps, each step with a short prompt and answer, one recall index row per run, one
// log record per step), then timed: erasing one run, a user erasure (every span names one of
// 1,000 end users, so every span is in the end-user index), and a retention pass deleting
// the oldest BENCH_EXPIRED_PERCENT (default 10) of the spans in batches of 1,000, with the sweep of recall's index after it. The store is
// written by the schema before time partitions and then migrated (timed): its rows become one
// partition, which a last pass, once all of it is past the bound, drops whole. Not part of
// `npm test` or `npm run bench`; docs/security.md has the figures.
//
// Run after `npm run build`:  node scripts/retention-cost.mjs
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test. The database is dropped afterwards
// (BENCH_KEEP=1 keeps it).
import os from 'node:os';
import { openScratchDatabase } from '../bench/lib/scratch-database.mjs';
import { OPEN_ACCESS } from '../dist/src/auth/access.js';
import { recordErasure } from '../dist/src/erasure/erasures.js';
import { applyRetention } from '../dist/src/erasure/retention.js';
import { createMemoryPayloadStore } from '../dist/src/payloads/memory-payload-store.js';
import { silentLogger } from '../dist/src/logger.js';
import { createPgDatabase } from '../dist/src/store/pg-database.js';
import { loadMigrations, migrate } from '../dist/src/store/migrate.js';

const server =
  process.env.TAPEDECK_BENCH_DATABASE_URL ??
  process.env.TAPEDECK_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const SPANS = Number(process.env.BENCH_SPANS ?? 1_000_000);
const EXPIRED_PERCENT = Number(process.env.BENCH_EXPIRED_PERCENT ?? 10);
const PER_RUN = 20;
const RUNS = Math.ceil(SPANS / PER_RUN);
const T0 = 1_700_000_000_000_000_000n;
const RUN_NS = 60_000_000_000n;

const scratch = await openScratchDatabase('retention', server);
const db = createPgDatabase(scratch.url, { maxConnections: 2, queryTimeoutMillis: 3_600_000 });

async function timed(what, work) {
  const start = performance.now();
  const value = await work();
  const s = (performance.now() - start) / 1000;
  console.log(`${what}: ${s.toFixed(2)} s`);
  return { value, s };
}

const trace = (r) => `decode(lpad(to_hex(${r}), 32, '0'), 'hex')`;
const spanId = (i) => `decode(lpad(to_hex(${i} + 1), 16, '0'), 'hex')`;

try {
  const [{ version }] = await db.query('SELECT version()');
  console.log(
    `machine: ${os.cpus().length} x ${os.cpus()[0]?.model}, ${Math.round(os.totalmem() / 2 ** 30)} GiB; ${version}`,
  );
  const migrations = loadMigrations();
  const partitioning = migrations.findIndex((m) => m.name === 'time_partitions');
  await migrate(db, migrations.slice(0, partitioning));
  await timed(`generating ${(RUNS * PER_RUN).toLocaleString('en-US')} spans`, () =>
    db.query(
      `INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns,
                                         status_code, attributes, events, links, resource, service_name, run_id)
       SELECT '', ${trace('r')}, ${spanId('i')}, CASE WHEN i = 0 THEN NULL ELSE ${spanId('0')} END,
              CASE WHEN i = 0 THEN 'workflow' ELSE 'chat gpt-4o' END, 'internal',
              ${T0} + r::bigint * ${RUN_NS} + i::bigint * 1000000000,
              ${T0} + r::bigint * ${RUN_NS} + i::bigint * 1000000000 + 500000000,
              'ok', jsonb_build_object('gen_ai.operation.name', 'chat', 'user.id', 'user-' || (r % 1000)),
              '[]', '[]', '{"service.name": "bench"}', 'bench', 'run-' || r
         FROM generate_series(0, $1::int - 1) r, generate_series(0, ${PER_RUN - 1}) i`,
      [RUNS],
    ),
  );
  await timed(`generating ${(RUNS * (PER_RUN - 1)).toLocaleString('en-US')} steps and log records`, async () => {
    await db.query(
      `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, model, status, request, response,
                                         fingerprint, params, layout, normalizer_version)
       SELECT '', ${trace('r')}, ${spanId('i')}, 'llm', 'chat gpt-4o', 'gpt-4o', 'ok',
              json_build_array(json_build_object('role', 'user', 'content', 'run ' || r || ' step ' || i || ': ' || repeat('a recorded prompt ', 12)))::text,
              json_build_array(json_build_object('role', 'assistant', 'content', 'a recorded answer ' || r))::text,
              'llm:gpt-4o#0123456789abcdef', '{}', 'otel-genai', 1
         FROM generate_series(0, $1::int - 1) r, generate_series(1, ${PER_RUN - 1}) i`,
      [RUNS],
    );
    await db.query(
      `INSERT INTO tapedeck_store.logs (tenant, record_key, trace_id, span_id, time_ns, observed_time_ns, event_name,
                                        body, attributes, resource)
       SELECT '', decode(md5(r || '/' || i), 'hex'), ${trace('r')}, ${spanId('i')},
              ${T0} + r::bigint * ${RUN_NS} + i::bigint * 1000000000, 0, 'gen_ai.user.message',
              to_jsonb('a logged prompt ' || r), '{}', '{}'
         FROM generate_series(0, $1::int - 1) r, generate_series(1, ${PER_RUN - 1}) i`,
      [RUNS],
    );
  });
  await timed(`generating ${RUNS.toLocaleString('en-US')} recall index rows`, () =>
    db.query(
      `INSERT INTO tapedeck_store.trace_words (tenant, words, masks, span_ids, trace_ids, steps)
       SELECT '', ARRAY[r::bigint, 7::bigint], ARRAY[524287::bigint, 524287::bigint],
              (SELECT string_agg(${spanId('i')}, ''::bytea ORDER BY i) FROM generate_series(1, ${PER_RUN - 1}) i),
              decode(repeat(encode(${trace('r')}, 'hex'), ${PER_RUN - 1}), 'hex'), ${PER_RUN - 1}
         FROM generate_series(0, $1::int - 1) r`,
      [RUNS],
    ),
  );
  await db.query('VACUUM ANALYZE');
  await timed('migrating to time partitions', () => migrate(db, migrations));
  await db.query('VACUUM ANALYZE');
  const [{ size }] = await db.query('SELECT pg_size_pretty(pg_database_size(current_database())) AS size');
  console.log(`database: ${size}`);

  const payloads = createMemoryPayloadStore();
  const audit = { access: OPEN_ACCESS, logger: silentLogger() };
  const middle = `run-${Math.floor(RUNS / 2)}`;
  const { value: one } = await timed(`erasing one run (${PER_RUN} spans)`, () =>
    recordErasure(db, payloads, null, { scope: 'run', run: middle, body: { run: middle } }, audit),
  );
  console.log(`  receipt ${JSON.stringify(one.receipt)}`);
  const { value: user } = await timed(`erasing one end user (50 runs, found through the end-user index)`, () =>
    recordErasure(db, payloads, null, { scope: 'user', user: 'user-7', body: { user: 'user-7' } }, audit),
  );
  console.log(`  receipt ${JSON.stringify(user.receipt)}`);

  const expiredRuns = BigInt(Math.floor((RUNS * EXPIRED_PERCENT) / 100));
  const nowNs = T0 + expiredRuns * RUN_NS + 1_000_000_000n * 86_400n;
  const settings = {
    defaultMs: 86_400_000,
    tenantsMs: new Map(),
    batchSpans: 1_000,
    sweepRows: 256,
    intervalMs: 60_000,
  };
  const { value: passes, s } = await timed(`retention pass (oldest ${EXPIRED_PERCENT} %)`, () =>
    applyRetention(db, settings, nowNs),
  );
  for (const p of passes) {
    console.log(`  receipt ${JSON.stringify(p.receipt)} in ${p.batches} batches`);
    console.log(`  ${((p.receipt.spans / s) | 0).toLocaleString('en-US')} spans/s overall`);
  }
  await timed('a second pass, with nothing expired', () => applyRetention(db, settings, nowNs));
  const allPast = T0 + BigInt(RUNS) * RUN_NS + 3_000_000_000n * 86_400n;
  const { value: drops, s: dropS } = await timed('retention pass dropping the partition of all the rest', () =>
    applyRetention(db, settings, allPast),
  );
  for (const p of drops) {
    console.log(`  receipt ${JSON.stringify(p.receipt)} in ${p.batches} batches, partitions ${p.partitions}`);
    console.log(`  ${((p.receipt.spans / dropS) | 0).toLocaleString('en-US')} spans/s overall`);
  }
} finally {
  await db.close();
  await scratch.cleanup();
}
