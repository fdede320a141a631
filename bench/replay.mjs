// Replay proxy throughput and per-call overhead, against a bare node:http server that reads and
// parses the same request (JSON.parse of its body) and answers it with the same bytes (so the
// difference is what the replay itself costs: routing, canonical normalisation and digest, the
// turn, rendering, bookkeeping). The CPU per call is also compared with a bare server that
// reads the request and answers the same bytes without parsing it ("bytes-only").
// Both are served on loopback and driven by the same keep-alive client, plain and streamed.
// Run after `npx tsc -p tsconfig.build.json`: node bench/replay.mjs [calls per series]
import http from 'node:http';
import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { createErrorHandler } from '../dist/src/http/error-response.js';
import { silentLogger } from '../dist/src/logger.js';
import { createReplayRoutes } from '../dist/src/replay/index.js';
import { postJson } from './lib/post-json.mjs';

const CALLS = Number(process.argv[2] ?? 2000); // per throughput series; a latency series is a quarter of it
const CONCURRENCY = 8; // one replay per concurrent client: calls to one replay take turns
const fixture = JSON.parse(
  readFileSync(new URL('../test/fixtures/replay/openllmetry-openai--weather.json', import.meta.url), 'utf8'),
);

// A run with a model step for every call one client makes in a series, each receiving the recorded final
// request and answering with its recorded text.
const final = fixture.tape.steps[2];
const request = fixture.calls[1].request;
const steps = Array.from({ length: Math.ceil(CALLS / 4) }, (_, i) => ({
  ...final,
  index: i,
  start_ns: BigInt(final.start_ns),
  duration_ns: BigInt(final.duration_ns),
}));
const tape = { ...fixture.tape, run: 'bench', spans_examined: steps.length, steps };

const app = new Hono();
app.route(
  '/v1/replays',
  createReplayRoutes(
    { loadTape: async () => tape, readPayload: async () => undefined },
    { shareMaxReplays: 1024, shareMaxBytes: 1024 * 1024 * 1024, totalMaxBytes: 1024 * 1024 * 1024 },
  ),
);
app.onError(createErrorHandler(silentLogger()));
const replayServer = await listen((port) => serve({ fetch: app.fetch, port, hostname: '127.0.0.1' }));
const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
const post = (port, path, body) => postJson(agent, `http://127.0.0.1:${port}${path}`, body);

function listen(start) {
  return new Promise((resolve) => {
    const s = start(0);
    s.on('listening', () => resolve(s));
  });
}

async function createReplay() {
  const r = await post(replayServer.address().port, '/v1/replays', JSON.stringify({ run: 'bench' }));
  if (r.status !== 201) throw new Error(`create: ${r.status} ${r.body}`);
  return JSON.parse(r.body).id;
}

/** Runs `perClient` calls on each of CONCURRENCY clients; returns per-call latencies (ms) and wall time. */
async function series(port, pathFor, body, perClient, clients) {
  const latencies = [];
  const paths = [];
  for (let c = 0; c < clients; c++) paths.push(await pathFor(c)); // replays are created before timing
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await Promise.all(
    paths.map(async (path) => {
      for (let i = 0; i < perClient; i++) {
        const s = performance.now();
        const r = await post(port, path, body);
        latencies.push(performance.now() - s);
        if (r.status !== 200) throw new Error(`call: ${r.status} ${r.body}`);
      }
    }),
  );
  const wallMs = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { latencies, wallMs, cpuUs: cpu.user + cpu.system };
}

function summary({ latencies, wallMs, cpuUs }) {
  const sorted = [...latencies].sort((a, b) => a - b);
  const q = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
  return {
    callsPerSecond: Math.round(latencies.length / (wallMs / 1000)),
    cpuUsPerCall: cpuUs / latencies.length,
    meanMs: latencies.reduce((a, b) => a + b, 0) / latencies.length,
    p50Ms: q(0.5),
    p99Ms: q(0.99),
  };
}

// the median round is reported: loopback timings on a shared machine are noisy
const ROUNDS = Number(process.env.BENCH_REPLAY_ROUNDS ?? 5);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const results = [];
for (const stream of [false, true]) {
  const body = JSON.stringify(stream ? { ...request, stream: true, stream_options: { include_usage: true } } : request);
  // the bytes the replay answers, captured once, served by the bare server
  const sampleId = await createReplay();
  const sample = await post(replayServer.address().port, `/v1/replays/${sampleId}/openai/v1/chat/completions`, body);
  // parse: the same request read and parsed as the replay must; else read and ignored
  const bareServer = (parse) =>
    listen((port) =>
      http
        .createServer((req, res) => {
          const chunks = [];
          req.on('data', (c) => chunks.push(c));
          req.on('end', () => {
            if (parse && typeof JSON.parse(Buffer.concat(chunks).toString('utf8')).model !== 'string')
              throw new Error('no model');
            res.writeHead(200, {
              'content-type': sample.headers['content-type'],
              'cache-control': 'no-store',
              'content-length': sample.body.length,
            });
            res.end(sample.body);
          });
        })
        .listen(port, '127.0.0.1'),
    );
  const bare = await bareServer(true);
  const bareBytes = await bareServer(false);
  const replayPath = async () => `/v1/replays/${await createReplay()}/openai/v1/chat/completions`;
  const barePath = async () => '/v1/chat/completions';
  const rounds = { replay: [], bare: [], bareBytes: [], replaySeq: [], bareSeq: [] };
  await series(replayServer.address().port, replayPath, body, 50, CONCURRENCY); // warm-up
  await series(bare.address().port, barePath, body, 50, CONCURRENCY);
  for (let i = 0; i < ROUNDS; i++) {
    globalThis.gc?.();
    rounds.replay.push(
      summary(
        await series(replayServer.address().port, replayPath, body, Math.floor(CALLS / CONCURRENCY), CONCURRENCY),
      ),
    );
    rounds.bare.push(
      summary(await series(bare.address().port, barePath, body, Math.floor(CALLS / CONCURRENCY), CONCURRENCY)),
    );
    rounds.bareBytes.push(
      summary(await series(bareBytes.address().port, barePath, body, Math.floor(CALLS / CONCURRENCY), CONCURRENCY)),
    );
    rounds.replaySeq.push(
      summary(await series(replayServer.address().port, replayPath, body, Math.floor(CALLS / 4), 1)),
    );
    rounds.bareSeq.push(summary(await series(bare.address().port, barePath, body, Math.floor(CALLS / 4), 1)));
  }
  const pick = (list, key) => median(list.map((r) => r[key]));
  results.push({
    mode: stream ? 'streamed' : 'plain',
    bytes: sample.body.length,
    replayRate: pick(rounds.replay, 'callsPerSecond'),
    bareRate: pick(rounds.bare, 'callsPerSecond'),
    // per round, each series beside the other: a busy machine slows both alike
    rateRatio: median(rounds.replay.map((r, i) => rounds.bare[i].callsPerSecond / r.callsPerSecond)),
    replayCpu: pick(rounds.replay, 'cpuUsPerCall'),
    bareCpu: pick(rounds.bare, 'cpuUsPerCall'),
    cpuRatio: median(rounds.replay.map((r, i) => r.cpuUsPerCall / rounds.bare[i].cpuUsPerCall)),
    bytesOnlyCpu: pick(rounds.bareBytes, 'cpuUsPerCall'),
    bytesOnlyCpuRatio: median(rounds.replay.map((r, i) => r.cpuUsPerCall / rounds.bareBytes[i].cpuUsPerCall)),
    replayP50: pick(rounds.replaySeq, 'p50Ms'),
    bareP50: pick(rounds.bareSeq, 'p50Ms'),
    replayMean: pick(rounds.replaySeq, 'meanMs'),
    bareMean: pick(rounds.bareSeq, 'meanMs'),
  });
  bare.close();
  bareBytes.close();
}

const f3 = (x) => x.toFixed(3).padStart(7);
console.log(
  `replay proxy vs a bare node:http server returning the same bytes (loopback, keep-alive, median of ${ROUNDS} rounds)`,
);
console.log(
  `throughput: ${CONCURRENCY} concurrent clients, one replay each (calls to one replay take turns); latency: one client, sequential`,
);
console.log(
  `cpu: this process's (client and server) per call over a throughput series; bare/replay ratios per round, then their median; load ${loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);
console.log(
  'mode      bytes | replay calls/s  bare calls/s  bare/replay | cpu us/call replay  bare  ratio | replay p50 ms  mean ms | bare p50 ms  mean ms | bytes-only bare: cpu  ratio',
);
for (const r of results) {
  console.log(
    `${r.mode.padEnd(9)} ${String(r.bytes).padStart(5)} | ${String(r.replayRate).padStart(14)}  ${String(r.bareRate).padStart(12)}  ${`${r.rateRatio.toFixed(2)}x`.padStart(11)} | ` +
      `${Math.round(r.replayCpu).toString().padStart(18)}  ${Math.round(r.bareCpu).toString().padStart(4)}  ${`${r.cpuRatio.toFixed(2)}x`.padStart(5)} | ` +
      `${f3(r.replayP50).padStart(13)}  ${f3(r.replayMean)} | ${f3(r.bareP50).padStart(11)}  ${f3(r.bareMean)} | ` +
      `${Math.round(r.bytesOnlyCpu).toString().padStart(20)}  ${`${r.bytesOnlyCpuRatio.toFixed(2)}x`.padStart(5)}`,
  );
}
agent.destroy();
replayServer.close();
