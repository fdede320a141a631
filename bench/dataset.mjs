// Dataset export at scale: memory stays flat while 100k runs stream
// out, and the skip counts add up (exported + skipped = considered).
//
//   npx tsc -p tsconfig.build.json && node bench/dataset.mjs [--runs 100000] [--page 200]
//
// Needs a PostgreSQL server (TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL,
// else postgres://postgres@127.0.0.1:5432/test); creates a scratch database and drops it
// (BENCH_KEEP=1 keeps it).
// Runs are written straight into the tables with SQL (one statement per 10k runs for spans,
// one for steps), twelve shapes in turn, (bench/lib/synthetic-runs.mjs, which the tests share): five
// complete, one per skip reason, one exported through id-less tool calls. The export writes
// the JSONL to a temporary file through a write stream (with backpressure), and RSS and heap
// are sampled every 5,000 runs. Prints one row per sample and the counts.
import { createWriteStream, statSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import { openScratchDatabase } from './lib/scratch-database.mjs';
import { insertSyntheticRuns } from './lib/synthetic-runs.mjs';
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
const MB = (n) => (n / 1024 / 1024).toFixed(1);

const scratch = await openScratchDatabase('dataset', server);
const db = createPgDatabase(scratch.url, { maxConnections: 2 });
const out = path.join(scratch.dataDir, 'export.jsonl');
try {
  await migrate(db);
  let t = performance.now();
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  for (let first = 0; first < RUNS; first += 10_000)
    await insertSyntheticRuns(db, '', first, Math.min(RUNS, first + 10_000) - 1, nowNs);
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
  await scratch.cleanup();
}
