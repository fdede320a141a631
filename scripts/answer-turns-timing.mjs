// How long migration 0025 (answers stored as their turns) takes on a large store: a fresh
// database migrated up to 0024 gets BENCH_ANSWERS model steps (default 300,000), each answered
// with a message stored whole (its finish_reason in it, ~1 KB) whose turn the store also holds
// (the history that resent it), and each resending the five answers before it; then the
// migrations after 0024 are applied as a start of tapedeck applies them. Not part of `npm
// test` or `npm run bench`; docs/deploy.md has the figures.
//
// Run after `npm run build`:  node scripts/answer-turns-timing.mjs
// Needs a PostgreSQL server: TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test. The database is dropped afterwards.
import os from 'node:os';
import { openScratchDatabase } from '../bench/lib/scratch-database.mjs';
import { createPgDatabase } from '../dist/src/store/pg-database.js';
import { loadMigrations, migrate } from '../dist/src/store/migrate.js';

const server =
  process.env.TAPEDECK_BENCH_DATABASE_URL ??
  process.env.TAPEDECK_TEST_DATABASE_URL ??
  'postgres://postgres@127.0.0.1:5432/test';
const ANSWERS = Number(process.env.BENCH_ANSWERS ?? 300_000);

const scratch = await openScratchDatabase('answer_turns', server);
const db = createPgDatabase(scratch.url, { maxConnections: 2 });
console.log(`cpu: ${os.cpus()[0]?.model}`);

async function timed(what, work) {
  const start = performance.now();
  const value = await work();
  console.log(`${what}: ${((performance.now() - start) / 1000).toFixed(1)} s`);
  return value;
}

try {
  const all = loadMigrations();
  await migrate(
    db,
    all.filter((m) => m.version <= 24),
  );
  // message i: answer i's turn; message ANSWERS + i: answer i whole
  await timed(`generating ${(2 * ANSWERS).toLocaleString('en-US')} messages`, () =>
    db.query(
      `INSERT INTO tapedeck_store.messages (tenant, digest, body, words)
       SELECT '', sha256(convert_to(body, 'UTF8')), body, ARRAY[n::bigint, (n * 7)::bigint, 42]
         FROM (SELECT i AS n, '{"content":"answer ' || i || ' ' || repeat('some words of an answer ', 40) || '","role":"assistant"}' AS body
                 FROM generate_series(1, $1::int) i
               UNION ALL
               SELECT $1::int + i, '{"content":"answer ' || i || ' ' || repeat('some words of an answer ', 40) || '","finish_reason":"stop","role":"assistant"}'
                 FROM generate_series(1, $1::int) i) m`,
      [ANSWERS],
    ),
  );
  await timed(`generating ${ANSWERS.toLocaleString('en-US')} steps`, () =>
    db.query(
      `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, model, status, fingerprint, params,
                                         layout, normalizer_version, request_messages, response_messages)
       SELECT '', decode(lpad(to_hex(i / 10), 32, '0'), 'hex'), decode(lpad(to_hex(i), 16, '0'), 'hex'), 'llm',
              'chat gpt-4o', 'gpt-4o', 'ok', 'llm:gpt-4o#0123456789abcdef', '{}', 'otel-genai', 1,
              ARRAY(SELECT generate_series(greatest(1, i - 5), i - 1)::bigint), ARRAY[($1::int + i)::bigint]
         FROM generate_series(1, $1::int) i`,
      [ANSWERS],
    ),
  );
  await db.query('VACUUM ANALYZE tapedeck_store.steps');
  await db.query('VACUUM ANALYZE tapedeck_store.messages');
  await timed('applying the migrations after 0024', () => migrate(db, all));
  const [counts] = await db.query(
    `SELECT (SELECT count(*) FROM tapedeck_store.messages)::int AS messages,
            (SELECT count(*) FROM tapedeck_store.steps WHERE response_finish_reasons IS NOT NULL)::int AS steps`,
  );
  console.log(
    `after: ${counts.messages.toLocaleString('en-US')} messages, ${counts.steps.toLocaleString('en-US')} steps with reasons`,
  );
} finally {
  await db.close();
  await scratch.cleanup();
}
