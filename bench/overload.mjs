// Overload: the built `tapedeck serve` (a child process, on a fresh PostgreSQL database) is
// offered twice what it sustains, and must shed the excess as retryable answers without
// growing, then ingest at full rate again once the overload stops.
//
// 1. What it takes: 4 closed-loop senders (each sends, waits for the answer, sends the next;
//    bench/lib/otlp-sender.mjs) of 512-span requests with 2 KB prompts, as the ingest bench
//    sends them, for BENCH_OVERLOAD_MEASURE seconds (10) after a warm-up: A spans/s
//    acknowledged. Recall's index is written in the steps' transaction, so A includes it; a
//    store with recall's backlog of older versions is waited for to catch up, and S, the spans
//    over the phase and the catching up, is what tapedeck sustains for good.
// 2. Overload: an open-loop sender starts a request every 1/(2A/512) s (twice what it
//    takes, more than twice what it sustains) for
//    BENCH_OVERLOAD_SECONDS (60), whatever the answers, each on its own connection
//    from a pool, and counts the answers: 200, 429 and 503 each with and without Retry-After,
//    any other status, and connection errors or timeouts.
// 3. Recovery: the closed-loop senders again from the moment the overload stops; the rate
//    acknowledged in the 10-20 s after it is compared with S (and, printed, with A). Recall's
//    index catches up with the overload's steps meanwhile, as it would in production.
//
// Peak RSS (VmHWM, and VmRSS sampled every 100 ms) is read over the whole run. The checks:
// every answer 200, 429 or 503 with Retry-After; peak RSS under PEAK_RSS_BOUND (docs/deploy.md
// states it); the rate after the overload at least RESUMED_SHARE of S. The exit status is
// non-zero when one fails. Build first (`npm run build`), then:
//   node bench/overload.mjs
// Settings (environment): BENCH_QUICK=1 (15 s of overload, shorter phases),
// BENCH_OVERLOAD_SECONDS, BENCH_OVERLOAD_MEASURE, BENCH_OVERLOAD_FACTOR (2),
// TAPEDECK_BENCH_DATABASE_URL, else TAPEDECK_TEST_DATABASE_URL, else
// postgres://postgres@127.0.0.1:5432/test (its database is created beside that one).
import http from 'node:http';
import { createBatchSource } from './lib/genai-batch.mjs';
import { openScratchDatabase } from './lib/scratch-database.mjs';
import { postExport, sendExports } from './lib/otlp-sender.mjs';
import { sampleMemory, startTapedeck } from './lib/tapedeck-process.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const OVERLOAD_SECONDS = Number(process.env.BENCH_OVERLOAD_SECONDS ?? (QUICK ? 15 : 60));
const MEASURE_SECONDS = Number(process.env.BENCH_OVERLOAD_MEASURE ?? (QUICK ? 5 : 10));
const FACTOR = Number(process.env.BENCH_OVERLOAD_FACTOR ?? 2);
const WARMUP_SECONDS = QUICK ? 2 : 4;
const SENDERS = 4;
const BATCH = 512;
/** the recovery window, in seconds after the overload stops */
const RECOVERY_FROM = 10;
const RECOVERY_TO = 20;
/** a request answered later than this counts as timed out */
const ANSWER_WITHIN_MS = 60_000;
const MiB = 1024 * 1024;
/** docs/deploy.md: what one tapedeck holds at most under any ingest load, default settings */
const PEAK_RSS_BOUND = 512 * MiB;
const RESUMED_SHARE = 0.8;
const ADMIN_URL =
  process.env.TAPEDECK_BENCH_DATABASE_URL ||
  process.env.TAPEDECK_TEST_DATABASE_URL ||
  'postgres://postgres@127.0.0.1:5432/test';

const fmt = (n) => Math.round(n).toLocaleString('en-US');

let server;
const {
  url: dbUrl,
  dataDir,
  db,
  cleanup,
} = await openScratchDatabase('overload', ADMIN_URL, async () => {
  await server?.stop();
});
console.log(
  `  ${BATCH} spans per request (2 KB prompts); sustained rate from ${SENDERS} closed-loop senders over ${MEASURE_SECONDS} s, ` +
    `then ${FACTOR}x it offered open-loop for ${OVERLOAD_SECONDS} s, then the rate ${RECOVERY_FROM}-${RECOVERY_TO} s after`,
);

let failed = false;
try {
  await db.connect();
  server = await startTapedeck({ databaseUrl: dbUrl, dataDir });
  const memory = sampleMemory(server.pid);
  const url = `http://127.0.0.1:${server.httpPort}/v1/traces`;
  const source = createBatchSource(2 * 1024, BATCH);

  await sendExports({ url, source, senders: SENDERS, seconds: WARMUP_SECONDS, minRequests: 2 });
  await recallCaughtUp();
  const taken = await sendExports({ url, source, senders: SENDERS, seconds: MEASURE_SECONDS });
  const catchUp = await recallCaughtUp();
  const accepted = taken.spans / taken.elapsed;
  const rate = taken.spans / (taken.elapsed + catchUp);
  console.log(
    `  takes ${fmt(accepted)} spans/s acknowledged (${taken.retries} busy answers); recall's index caught up ` +
      `${catchUp.toFixed(1)} s later: sustains ${fmt(rate)} spans/s`,
  );

  const offered = (FACTOR * accepted) / BATCH;
  const overload = await offerOpenLoop({ url, source, requestsPerSecond: offered, seconds: OVERLOAD_SECONDS });
  const stoppedAt = overload.stoppedAt;
  const answers = overload.answers;
  console.log(
    `  overload: ${fmt(offered * BATCH)} spans/s offered (${offered.toFixed(1)} requests/s) for ${OVERLOAD_SECONDS} s: ` +
      `${overload.sent} requests; ${describeAnswers(answers)}; ` +
      `${fmt((answers.ok * BATCH) / OVERLOAD_SECONDS)} spans/s acknowledged; at most ${overload.maxInFlight} in flight`,
  );

  // Recovery: closed-loop senders from the moment the overload stops (its last requests may
  // still be answered meanwhile), acknowledgements counted by when they came.
  const backlogAtStop = await backlogSteps();
  const recovery = await sendTimed({ url, source, from: stoppedAt, seconds: RECOVERY_TO });
  const resumed = recovery.spansBetween(RECOVERY_FROM, RECOVERY_TO) / (RECOVERY_TO - RECOVERY_FROM);
  console.log(
    `  after: ${fmt(recovery.spansBetween(0, RECOVERY_FROM) / RECOVERY_FROM)} spans/s in the first ${RECOVERY_FROM} s, ` +
      `${fmt(resumed)} spans/s ${RECOVERY_FROM}-${RECOVERY_TO} s after: ${((resumed / rate) * 100).toFixed(0)} % of what it sustains, ` +
      `${((resumed / accepted) * 100).toFixed(0)} % of what it took; recall's backlog ${fmt(backlogAtStop)} steps when the overload stopped, ` +
      `${fmt(await backlogSteps())} ${RECOVERY_TO} s later`,
  );

  const mem = memory.stop();
  const peak = Math.max(mem.hwm, mem.sampledPeak);
  const wrong = answers.other + answers.errors + answers.busyWithoutRetryAfter + answers.unavailableWithoutRetryAfter;
  const checks = [
    [`every answer 200, 429 or 503 with Retry-After (${wrong} others)`, wrong === 0],
    [`peak RSS ${Math.round(peak / MiB)} MiB ≤ ${PEAK_RSS_BOUND / MiB} MiB`, peak <= PEAK_RSS_BOUND],
    [
      `ingest resumed: ${RECOVERY_FROM}-${RECOVERY_TO} s after, ${((resumed / rate) * 100).toFixed(0)} % of what it sustains (≥ ${RESUMED_SHARE * 100} %)`,
      resumed >= RESUMED_SHARE * rate,
    ],
  ];
  console.log('');
  for (const [what, ok] of checks) console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
  failed = checks.some(([, ok]) => !ok);
  if (answers.statusExamples.length > 0) console.log(`  unexpected answers, e.g. ${answers.statusExamples.join('; ')}`);
  console.log(
    `overload ${FACTOR}x for ${OVERLOAD_SECONDS} s: takes ${fmt(accepted)}, sustains ${fmt(rate)} spans/s; ${describeAnswers(answers)}; ` +
      `peak RSS ${Math.round(peak / MiB)} MiB; after ${fmt(resumed)} spans/s (${((resumed / rate) * 100).toFixed(0)} % of sustained)`,
  );
} finally {
  await cleanup();
}
process.exitCode = failed ? 1 : 0;

/** Waits until recall's backlog is empty; resolves with the seconds that took. */
async function recallCaughtUp() {
  const started = performance.now();
  while ((await backlogSteps()) > 0) await new Promise((r) => setTimeout(r, 50));
  return (performance.now() - started) / 1000;
}

/** Steps stored but not yet in recall's index (none where it is written with the steps). */
async function backlogSteps() {
  const table = await db.query(`SELECT to_regclass('tapedeck_store.recall_backlog') IS NOT NULL AS present`);
  if (!table.rows[0].present) return 0;
  const { rows } = await db.query('SELECT coalesce(sum(steps), 0)::bigint AS n FROM tapedeck_store.recall_backlog');
  return Number(rows[0].n);
}

function describeAnswers(a) {
  return (
    `200 ${a.ok}, 429 ${a.busy}, 503 ${a.unavailable}` +
    `${a.busyWithoutRetryAfter + a.unavailableWithoutRetryAfter ? ` (${a.busyWithoutRetryAfter + a.unavailableWithoutRetryAfter} without Retry-After)` : ''}` +
    `, other ${a.other}, errors ${a.errors}`
  );
}

/**
 * Starts a request every 1/requestsPerSecond s for `seconds`, each with a fresh body, without
 * waiting for earlier answers; resolves once every request is answered, with the counts.
 */
async function offerOpenLoop({ url, source, requestsPerSecond, seconds }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });
  const target = new URL(url);
  const answers = {
    ok: 0,
    busy: 0,
    unavailable: 0,
    busyWithoutRetryAfter: 0,
    unavailableWithoutRetryAfter: 0,
    other: 0,
    errors: 0,
    statusExamples: [],
  };
  const pending = new Set();
  let sent = 0;
  let maxInFlight = 0;
  const started = performance.now();
  const end = started + seconds * 1000;
  for (;;) {
    const now = performance.now();
    if (now >= end) break;
    const due = Math.floor(((now - started) / 1000) * requestsPerSecond) + 1;
    for (; sent < due; sent++) {
      const p = postExport(agent, target, source.next(), ANSWER_WITHIN_MS).then(
        ({ status, retryAfter }) => {
          if (status === 200) answers.ok++;
          else if (status === 429) {
            answers.busy++;
            if (!(Number(retryAfter) > 0)) answers.busyWithoutRetryAfter++;
          } else if (status === 503) {
            answers.unavailable++;
            if (!(Number(retryAfter) > 0)) answers.unavailableWithoutRetryAfter++;
          } else {
            answers.other++;
            if (answers.statusExamples.length < 5) answers.statusExamples.push(String(status));
          }
        },
        (error) => {
          answers.errors++;
          if (answers.statusExamples.length < 5) answers.statusExamples.push(error.code ?? error.message);
        },
      );
      pending.add(p);
      p.finally(() => pending.delete(p));
      maxInFlight = Math.max(maxInFlight, pending.size);
    }
    const nextAt = started + ((sent + 0) / requestsPerSecond) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(1, nextAt - performance.now())));
  }
  const stoppedAt = performance.now();
  await Promise.all([...pending]);
  agent.destroy();
  return { answers, sent, maxInFlight, stoppedAt };
}

/** Closed-loop senders from now until `seconds` after `from`, each acknowledgement timed. */
async function sendTimed({ url, source, from, seconds }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: SENDERS });
  const target = new URL(url);
  const acknowledged = []; // seconds after `from`
  const end = from + seconds * 1000;
  const sender = async () => {
    while (performance.now() < end) {
      const { status } = await postExport(agent, target, source.next(), ANSWER_WITHIN_MS).catch(() => ({ status: 0 }));
      if (status === 200) acknowledged.push((performance.now() - from) / 1000);
      else await new Promise((r) => setTimeout(r, 100));
    }
  };
  await Promise.all(Array.from({ length: SENDERS }, sender));
  agent.destroy();
  return {
    spansBetween: (a, b) => acknowledged.filter((t) => t >= a && t < b).length * BATCH,
  };
}
