// Replicas on one PostgreSQL database (deploy/scale-out.md): ingest through 1, 2 and 3
// `tapedeck serve` processes against the raw figure, and replay calls through a replica that
// does not hold the replay against the one that does.
//
// Ingest: three built tapedecks (deriving, as in production) on one fresh database; the same
// senders (OTLP/HTTP protobuf, 512 realistic GenAI spans a request, bench/lib/genai-batch.mjs)
// spread round-robin over the first 1, 2 or 3 of them; next to it the raw figure (decode,
// SHA-256, COPY the same rows: bench/ingest.mjs says what it is). Rounds alternate raw and the
// three spreads under the same background load; each spread's ratio to raw is taken within
// its round, then the median over rounds (recall's index is written with the steps, so each
// phase includes it). Afterwards every acknowledged span must be
// stored exactly once. On one machine the replicas share its cores with PostgreSQL: the
// figure to watch is that adding replicas loses neither throughput nor correctness.
//
// Replay: a run of model steps sent to replica A, replayed (strict) by clients each with a
// replay of its own created on A, called through A (the owner) and through B (forwarded to A).
//
// Build first (`npm run build`), then: node bench/replicas.mjs
// Settings (environment): BENCH_QUICK=1 (one short round), BENCH_REPLICAS_ROUNDS,
// BENCH_REPLICAS_SECONDS (per phase), BENCH_REPLICAS_SENDERS (default 6: 6, 3 or 2 a replica),
// BENCH_DATABASE_URL (as in bench/ingest.mjs).
import http from 'node:http';
import { loadavg } from 'node:os';
import path from 'node:path';
import { createBatchSource } from './lib/genai-batch.mjs';
import { postJson } from './lib/post-json.mjs';
import { sendExports } from './lib/otlp-sender.mjs';
import { createRawIngest } from './lib/raw-ingest.mjs';
import { openScratchDatabase } from './lib/scratch-database.mjs';
import { startTapedeck } from './lib/tapedeck-process.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const ROUNDS = Number(process.env.BENCH_REPLICAS_ROUNDS ?? (QUICK ? 1 : 3));
const SECONDS = Number(process.env.BENCH_REPLICAS_SECONDS ?? (QUICK ? 4 : 8));
const SENDERS = Number(process.env.BENCH_REPLICAS_SENDERS ?? 6);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const REPLICAS = 3;
const REPLAY_STEPS = QUICK ? 100 : 250;
const REPLAY_CLIENTS = 4;

const fmt = (n) => Math.round(n).toLocaleString('en-US');
const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

let running = [];
const {
  url: dbUrl,
  dataDir,
  db,
  cleanup,
} = await openScratchDatabase('replicas', ADMIN_URL, async () => {
  for (const s of running) await s.stop().catch(() => {});
});

try {
  await db.connect();
  for (let i = 0; i < REPLICAS; i++) {
    running.push(await startTapedeck({ databaseUrl: dbUrl, dataDir: path.join(dataDir, `replica-${i}`) }));
  }
  const urls = running.map((s) => `http://127.0.0.1:${s.httpPort}`);
  console.log(
    `  ${REPLICAS} replicas on one database, ${SENDERS} senders spread round-robin, ${ROUNDS} round(s) of raw then 1, 2, 3 replicas, ${SECONDS} s per phase; load average ${load()}`,
  );
  const ingest = await ingestPhases(urls);
  const replay = await replayPhases(urls);

  console.log('');
  console.log(
    `ingest, 2 KB prompts (medians over rounds; ratio to raw taken within each round); load average ${load()}`,
  );
  console.log(`${'replicas'.padEnd(10)}${'spans/s'.padStart(9)}${'ratio'.padStart(8)}${'vs 1'.padStart(8)}`);
  console.log(`${'raw'.padEnd(10)}${fmt(ingest.raw).padStart(9)}${'100%'.padStart(8)}`);
  for (const r of ingest.spreads)
    console.log(
      `${String(r.replicas).padEnd(10)}${fmt(r.spans).padStart(9)}${`${(r.ratio * 100).toFixed(0)}%`.padStart(8)}${`${(r.vsOne * 100).toFixed(0)}%`.padStart(8)}`,
    );
  console.log(
    `stored exactly once: ${ingest.stored.toLocaleString('en-US')} spans stored, ${ingest.acknowledged.toLocaleString('en-US')} acknowledged${ingest.stored === ingest.acknowledged ? '' : ' (MISMATCH)'}`,
  );
  console.log(
    `replay, ${REPLAY_CLIENTS} clients with a replay each, strict, plain: owner ${fmt(replay.owner.rate)} calls/s (p50 ${replay.owner.p50.toFixed(2)} ms), ` +
      `through another replica ${fmt(replay.forwarded.rate)} calls/s (p50 ${replay.forwarded.p50.toFixed(2)} ms), ${((replay.forwarded.rate / replay.owner.rate) * 100).toFixed(0)}% of the owner's`,
  );
  if (ingest.stored !== ingest.acknowledged) process.exitCode = 1;
} finally {
  for (const s of running) await s.stop().catch(() => {});
  running = [];
  await cleanup();
}

async function ingestPhases(urls) {
  const source = createBatchSource(2 * 1024, 512);
  const raw = await createRawIngest(dbUrl, SENDERS);
  const spread = async (n, seconds, minRequests) => {
    const per = Array.from({ length: n }, (_, i) => Math.floor(SENDERS / n) + (i < SENDERS % n ? 1 : 0));
    const results = await Promise.all(
      per.map((senders, i) => sendExports({ url: `${urls[i]}/v1/traces`, source, senders, seconds, minRequests })),
    );
    return {
      spans: results.reduce((s, r) => s + r.spans, 0),
      elapsed: Math.max(...results.map((r) => r.elapsed)),
    };
  };
  let acknowledged = 0;
  try {
    // warm-up: every replica, and raw
    const warm = await spread(REPLICAS, QUICK ? 1 : 3, 2);
    acknowledged += warm.spans;
    await raw.run({ source, seconds: QUICK ? 1 : 3, minRequests: 2 });
    const rounds = [];
    for (let r = 0; r < ROUNDS; r++) {
      await db.query('CHECKPOINT');
      const w = await raw.run({ source, seconds: SECONDS });
      const rawRate = w.spans / w.elapsed;
      const round = { raw: rawRate, spreads: [] };
      for (let n = 1; n <= REPLICAS; n++) {
        await db.query('CHECKPOINT');
        const t = await spread(n, SECONDS, 1);
        acknowledged += t.spans;
        round.spreads.push(t.spans / t.elapsed);
      }
      rounds.push(round);
      console.log(
        `  round ${r + 1}: raw ${fmt(rawRate)} spans/s; ${round.spreads.map((s, i) => `${i + 1} replica${i ? 's' : ''} ${fmt(s)} (${((s / rawRate) * 100).toFixed(0)}%)`).join('; ')}; load average ${load()}`,
      );
    }
    const { rows } = await db.query('SELECT count(*)::bigint AS n FROM tapedeck_store.spans');
    return {
      raw: median(rounds.map((r) => r.raw)),
      spreads: Array.from({ length: REPLICAS }, (_, i) => ({
        replicas: i + 1,
        spans: median(rounds.map((r) => r.spreads[i])),
        ratio: median(rounds.map((r) => r.spreads[i] / r.raw)),
        vsOne: median(rounds.map((r) => r.spreads[i] / r.spreads[0])),
      })),
      stored: Number(rows[0].n),
      acknowledged,
    };
  } finally {
    await raw.close();
  }
}

/** A run of REPLAY_STEPS model calls with one prompt and answer, as an OTel GenAI exporter sends them. */
function replayRun() {
  const attr = (key, value) => ({ key, value: { stringValue: value } });
  const hex = (n, width) => n.toString(16).padStart(width, '0');
  const traceId = hex(Date.now(), 32);
  const part = (role, content, extra = {}) => ({ role, parts: [{ type: 'text', content }], ...extra });
  const startNs = 1_764_460_800_000_000_000n;
  const spans = Array.from({ length: REPLAY_STEPS }, (_, i) => ({
    traceId,
    spanId: hex(i + 1, 16),
    name: 'chat gpt-4o',
    kind: 3,
    startTimeUnixNano: String(startNs + BigInt(i) * 1_000_000n),
    endTimeUnixNano: String(startNs + BigInt(i) * 1_000_000n + 500_000n),
    attributes: [
      attr('session.id', 'bench-replicas-replay'),
      attr('gen_ai.operation.name', 'chat'),
      attr('gen_ai.request.model', 'gpt-4o'),
      attr('gen_ai.input.messages', JSON.stringify([part('user', 'What is the weather in Paris?')])),
      attr('gen_ai.output.messages', JSON.stringify([part('assistant', 'Sunny, 18 °C.', { finish_reason: 'stop' })])),
    ],
  }));
  const resource = { attributes: [attr('service.name', 'bench-replicas')] };
  return JSON.stringify({ resourceSpans: [{ resource, scopeSpans: [{ scope: { name: 'bench' }, spans }] }] });
}

async function replayPhases(urls) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: REPLAY_CLIENTS * 2 });
  const [owner, other] = urls;
  const sent = await postJson(agent, `${owner}/v1/traces`, replayRun());
  if (sent.status !== 200) throw new Error(`sending the run: ${sent.status} ${sent.body}`);
  const request = JSON.stringify({
    model: 'gpt-4o',
    messages: [{ role: 'user', content: 'What is the weather in Paris?' }],
  });
  const series = async (through) => {
    const ids = [];
    for (let c = 0; c < REPLAY_CLIENTS; c++) {
      const created = await postJson(agent, `${owner}/v1/replays`, JSON.stringify({ run: 'bench-replicas-replay' }));
      if (created.status !== 201) throw new Error(`creating a replay: ${created.status} ${created.body}`);
      ids.push(JSON.parse(created.body).id);
    }
    const latencies = [];
    const started = performance.now();
    await Promise.all(
      ids.map(async (id) => {
        for (let i = 0; i < REPLAY_STEPS; i++) {
          const t0 = performance.now();
          const r = await postJson(agent, `${through}/v1/replays/${id}/openai/v1/chat/completions`, request);
          latencies.push(performance.now() - t0);
          if (r.status !== 200) throw new Error(`replay call: ${r.status} ${r.body}`);
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    return { rate: latencies.length / elapsed, p50: median(latencies) };
  };
  await series(owner); // warm-up, both ways
  await series(other);
  const rounds = { owner: [], forwarded: [] };
  for (let r = 0; r < ROUNDS; r++) {
    rounds.owner.push(await series(owner));
    rounds.forwarded.push(await series(other));
  }
  agent.destroy();
  const pick = (list) => ({ rate: median(list.map((x) => x.rate)), p50: median(list.map((x) => x.p50)) });
  return { owner: pick(rounds.owner), forwarded: pick(rounds.forwarded) };
}
