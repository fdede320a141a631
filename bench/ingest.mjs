// End-to-end ingest throughput: the built `tapedeck serve` (a child process, on a fresh
// PostgreSQL database) receives OTLP/HTTP protobuf export requests of 512 realistic GenAI
// spans (bench/lib/genai-batch.mjs) from a few concurrent senders; every request is counted
// when it is acknowledged (200), that is after its transaction committed. Two tapedecks
// take turns: one as in production (normalization, offloading at the default threshold,
// steps, runs and recall's words written in the spans' transaction), and one started with
// --derive off, which keeps the spans only: the ingest core (decode, dedupe, COPY, commit).
//
// Recall's words are written in the ingest transaction (src/tapes/message-rows.ts), so what
// is acknowledged is also what a sender could keep up for good. Against a build that indexed
// after the transaction (a tapedeck_store.recall_backlog table), the bench waits after each
// deriving phase until that backlog is empty and reports the time and CPU it took: then
// "sustained" is the phase's spans over the phase and the catching up together.
//
// Next to it, by the same script on the same database: the "raw" figure, a lower bound of
// what any receiver has to do with the same bytes: decode the same request bodies (tapedeck's
// own decoder), SHA-256 each span's content, and COPY (binary) the same span rows into an
// equivalent table (LIKE tapedeck_store.spans INCLUDING ALL: same columns, keys, indexes and
// column compression), one transaction per request, from as many connections as senders.
//
// Rounds alternate the tapedeck and raw phases so all see the same background load; figures
// are medians over rounds, the ratio the median of the rounds' ratios. Prints spans/s, MB/s
// (request bytes), each server's peak RSS and the ratio to raw. Build first (`npm run build`), then:
//   node bench/ingest.mjs
// Settings (environment): BENCH_QUICK=1 (one short round), BENCH_INGEST_ROUNDS,
// BENCH_INGEST_SECONDS (per phase; the 64 KB case takes twice as long), BENCH_INGEST_WARMUP
// (seconds of unmeasured load per server and for raw before the rounds; twice as long for
// 64 KB), BENCH_INGEST_SENDERS (default 4), BENCH_INGEST_BATCH (spans per request, a multiple
// of 8; default 512), BENCH_INGEST_CASES (e.g. "2k" or "2k,64k"), BENCH_TEXT (natural, the
// default, or uniform: bench/lib/genai-batch.mjs), BENCH_SERVE_NODE_ARGS (Node options for the
// servers, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof"), BENCH_DATABASE_URL (a database to
// connect to for CREATE DATABASE; default postgres://postgres@127.0.0.1:5432/postgres).
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { createBatchSource } from './lib/genai-batch.mjs';
import { openScratchDatabase } from './lib/scratch-database.mjs';
import { cpuSecondsOfAll, sampleMemory, serverCpuMeter, startTapedeck } from './lib/tapedeck-process.mjs';
import { createRawIngest } from './lib/raw-ingest.mjs';
import { sendExports } from './lib/otlp-sender.mjs';
import { recallCaughtUp } from './lib/recall-caught-up.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_INGEST_ROUNDS ?? (QUICK ? 1 : 3));
const SECONDS = Number(process.env.BENCH_INGEST_SECONDS ?? (QUICK ? 4 : 10));
// Seconds of load, not a couple of requests: a shorter warm-up leaves a server's first round
// slower than the next ones (its heap still growing, its worker thread's code not yet optimized).
const WARMUP = Number(process.env.BENCH_INGEST_WARMUP ?? (QUICK ? 1 : 3));
const SENDERS = Number(process.env.BENCH_INGEST_SENDERS ?? 4);
const BATCH = Number(process.env.BENCH_INGEST_BATCH ?? 512);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const MiB = 1024 * 1024;

const ALL_CASES = [
  { key: '2k', label: '2 KB prompts', promptBytes: 2 * 1024, seconds: SECONDS, warmup: WARMUP, targetSpans: 8000 },
  {
    key: '64k',
    label: '64 KB prompts',
    promptBytes: 64 * 1024,
    seconds: SECONDS * 2,
    warmup: WARMUP * 2,
    targetSpans: 450,
  },
];
const wanted = (process.env.BENCH_INGEST_CASES ?? '2k,64k').split(',').map((s) => s.trim());
const CASES = ALL_CASES.filter((c) => wanted.includes(c.key));

// CPU seconds per second of a phase → CPU milliseconds per 1000 spans: a cost that a busy
// machine (fewer cycles for us) distorts much less than spans/s.
const msPer = (phase, cpuPerSecond) => fmt((cpuPerSecond * phase.elapsed * 1e6) / phase.spans);
// CPU seconds spent for a phase's spans → milliseconds per 1000 of them.
const perThousand = (cpuSeconds, spans) => (cpuSeconds * 1e6) / spans;
// A deriving phase's spans over the phase and recall's catching up after it.
const sustainedRate = (t) => t.spans / (t.elapsed + t.catchUp.seconds);
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

let running = []; // the tapedeck children of the case in progress, stopped on the way out
const {
  url: dbUrl,
  dataDir,
  db,
  cleanup,
} = await openScratchDatabase('ingest', ADMIN_URL, async () => {
  for (const s of running) await s.stop().catch(() => {});
});
console.log(
  `  ${BATCH} spans per request, ${SENDERS} senders, ${ROUNDS} round(s) of tapedeck (deriving), tapedeck (spans only) then raw, ${SECONDS} s per phase (64 KB: ${SECONDS * 2} s); medians over rounds`,
);

// Two tapedecks per case on the same database: one deriving steps and runs as spans arrive
// (the default), one with --derive off (spans and log records only: the ingest core).
const MODES = [
  { key: 'derive', label: 'tapedeck', env: {}, target: 0.5 },
  { key: 'spans', label: 'spans only (--derive off)', env: { TAPEDECK_DERIVE: 'off' }, target: 0.6 },
];

const results = [];
try {
  await db.connect();
  for (const c of CASES) {
    const source = createBatchSource(c.promptBytes, BATCH);
    const servers = [];
    for (const m of MODES) {
      servers.push(
        await startTapedeck({
          databaseUrl: dbUrl,
          dataDir: path.join(dataDir, `${c.key}-${m.key}`),
          env: m.env,
          nodeArgs: (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean),
        }),
      );
      running.push(servers.at(-1));
    }
    const raw = await createRawIngest(dbUrl, SENDERS);
    try {
      const urls = servers.map((s) => `http://127.0.0.1:${s.httpPort}/v1/traces`);
      // Warm-up, not measured, as long for each: JIT, heap growth, connection pools, the first
      // pages of every index.
      for (const url of urls) await sendExports({ url, source, senders: SENDERS, seconds: c.warmup, minRequests: 2 });
      await recallCaughtUp(db, servers[0]);
      await raw.run({ source, seconds: c.warmup, minRequests: 2 });
      const memory = servers.map((s) => sampleMemory(s.pid));
      const td = MODES.map(() => []);
      const rw = [];
      for (let r = 0; r < ROUNDS; r++) {
        for (let i = 0; i < MODES.length; i++) {
          const server = servers[i];
          await db.query('CHECKPOINT');
          const meter = await serverCpuMeter(db, server.pid);
          const t = await sendExports({ url: urls[i], source, senders: SENDERS, seconds: c.seconds });
          // Backends the pool opened during the phase count from zero; the other server's are idle.
          const spent = await meter();
          t.serverCpu = spent.server / t.elapsed;
          t.pgCpu = spent.pg / t.elapsed;
          if (MODES[i].key === 'derive') t.catchUp = await recallCaughtUp(db, server);
          td[i].push(t);
        }
        await db.query('CHECKPOINT');
        const own0 = process.cpuUsage();
        const rawPg0 = cpuSecondsOfAll(raw.backendPids);
        const w = await raw.run({ source, seconds: c.seconds });
        const own = process.cpuUsage(own0);
        w.clientCpu = (own.user + own.system) / 1e6 / w.elapsed;
        w.pgCpu = (cpuSecondsOfAll(raw.backendPids) - rawPg0) / w.elapsed;
        rw.push(w);
        const phases = MODES.map((m, i) => {
          const t = td[i][r];
          const later = t.catchUp
            ? `; recall's index caught up ${t.catchUp.seconds.toFixed(1)} s later (server ${fmt(perThousand(t.catchUp.serverCpu, t.spans))}, ` +
              `postgres ${fmt(perThousand(t.catchUp.pgCpu, t.spans))}, whole machine ${fmt(perThousand(t.catchUp.machineCpu, t.spans))})`
            : '';
          return `${m.label} ${fmt(t.spans / t.elapsed)} spans/s (cpu ms per 1000 spans: server ${msPer(t, t.serverCpu)}, postgres ${msPer(t, t.pgCpu)}${t.retries ? `; ${t.retries} busy answers` : ''}${later})`;
        });
        console.log(
          `  ${c.label}, round ${r + 1}: ${phases.join('; ')}; raw ${fmt(w.spans / w.elapsed)} spans/s (bench ${msPer(w, w.clientCpu)}, postgres ${msPer(w, w.pgCpu)})`,
        );
      }
      const rate = (xs, k) => median(xs.map((x) => x[k] / x.elapsed));
      const out = {
        case: c,
        requestBytes: source.bytes,
        raw: {
          spans: rate(rw, 'spans'),
          bytes: rate(rw, 'bytes'),
          rounds: rw.map((w) => w.spans / w.elapsed),
          clientCpuMsPer1000: median(rw.map((w) => (w.clientCpu * 1e6) / (w.spans / w.elapsed))),
          pgCpuMsPer1000: median(rw.map((w) => (w.pgCpu * 1e6) / (w.spans / w.elapsed))),
        },
      };
      MODES.forEach((m, i) => {
        const mem = memory[i].stop();
        out[m.key] = {
          spans: rate(td[i], 'spans'),
          bytes: rate(td[i], 'bytes'),
          rounds: td[i].map((t) => t.spans / t.elapsed),
          serverCpuMsPer1000: median(td[i].map((t) => (t.serverCpu * 1e6) / (t.spans / t.elapsed))),
          pgCpuMsPer1000: median(td[i].map((t) => (t.pgCpu * 1e6) / (t.spans / t.elapsed))),
          peakRss: Math.max(mem.hwm, mem.sampledPeak),
          ...(m.key === 'derive'
            ? {
                catchUpSeconds: median(td[i].map((t) => t.catchUp.seconds)),
                catchUpServerCpuMsPer1000: median(td[i].map((t) => perThousand(t.catchUp.serverCpu, t.spans))),
                catchUpPgCpuMsPer1000: median(td[i].map((t) => perThousand(t.catchUp.pgCpu, t.spans))),
                catchUpMachineCpuMsPer1000: median(td[i].map((t) => perThousand(t.catchUp.machineCpu, t.spans))),
                sustainedSpans: median(td[i].map(sustainedRate)),
                sustainedRatio: median(td[i].map((t, r) => sustainedRate(t) / (rw[r].spans / rw[r].elapsed))),
              }
            : {}),
          // Each round's phases run back to back under the same background load: the ratio is
          // taken per round, then the median of those.
          ratio: median(td[i].map((t, r) => t.spans / t.elapsed / (rw[r].spans / rw[r].elapsed))),
        };
      });
      results.push(out);
    } finally {
      await raw.close();
      for (const s of servers) await s.stop();
      running = [];
    }
  }
} finally {
  await cleanup();
}

console.log('');
for (const r of results) {
  console.log(
    `cpu ms per 1000 spans, ${r.case.label}: ${MODES.map((m) => `${m.label} ${fmt(r[m.key].serverCpuMsPer1000)} (server) + ${fmt(r[m.key].pgCpuMsPer1000)} (postgres)`).join('; ')}; ` +
      `raw ${fmt(r.raw.clientCpuMsPer1000)} (bench) + ${fmt(r.raw.pgCpuMsPer1000)} (postgres)`,
  );
}
for (const r of results) {
  const d = r.derive;
  console.log(
    `recall's index after deriving, ${r.case.label}: caught up in ${d.catchUpSeconds.toFixed(1)} s, cpu ms per 1000 spans ${fmt(d.catchUpServerCpuMsPer1000)} (server) + ${fmt(d.catchUpPgCpuMsPer1000)} (postgres backends), ${fmt(d.catchUpMachineCpuMsPer1000)} (whole machine); ` +
      `sustained (phase and catching up) ${fmt(d.sustainedSpans)} spans/s, ${(d.sustainedRatio * 100).toFixed(0)}% of raw`,
  );
}
console.log(
  `${'case'.padEnd(15)}${'request'.padStart(9)} ${'mode'.padEnd(27)}${'spans/s'.padStart(8)} ${'MB/s'.padStart(6)} ${'peak RSS'.padStart(9)} ${'raw spans/s'.padStart(12)} ${'MB/s'.padStart(6)} ${'ratio'.padStart(6)}`,
);
for (const r of results) {
  for (const m of MODES) {
    const x = r[m.key];
    console.log(
      `${r.case.label.padEnd(15)}${`${(r.requestBytes / 1e6).toFixed(1)} MB`.padStart(9)} ${m.label.padEnd(27)}${fmt(x.spans).padStart(8)} ${(x.bytes / 1e6).toFixed(1).padStart(6)} ` +
        `${`${Math.round(x.peakRss / MiB)} MiB`.padStart(9)} ${fmt(r.raw.spans).padStart(12)} ${(r.raw.bytes / 1e6).toFixed(1).padStart(6)} ${`${(x.ratio * 100).toFixed(0)}%`.padStart(6)}`,
    );
  }
}
if (process.env.BENCH_RESULT_FILE) {
  writeFileSync(
    process.env.BENCH_RESULT_FILE,
    JSON.stringify(
      results.map((r) => ({ ...r, case: r.case.key })),
      null,
      2,
    ),
  );
}
console.log(
  `targets: spans only ≥ 60% of raw, deriving ≥ 50%; ≥ ${CASES.map((c) => `${fmt(c.targetSpans)} spans/s (${c.label})`).join(', ')}, peak RSS ≤ 300 MiB`,
);
