// Cassette throughput: export of one run from a store (steps/s, MB/s of cassette written),
// import of that cassette into a fresh store (audit + load + write: steps/s, MB/s read), and
// replay calls/s straight from the file against replay from the store, both through the same
// replay proxy on loopback, driven by one keep-alive client (calls to one replay take turns).
// The run has STEPS model calls, each with a system prompt, a user prompt of about 1 KB and a
// 300-byte answer, stored in embedded PGlite (in memory) with an in-memory payload store.
// Run after `npx tsc -p tsconfig.build.json`: node bench/cassettes.mjs [steps]
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { exportCassette } from '../dist/src/cassettes/export.js';
import { defaultCassetteLimits } from '../dist/src/cassettes/format.js';
import { importCassette } from '../dist/src/cassettes/import.js';
import { loadCassette } from '../dist/src/cassettes/load.js';
import { loadConfig } from '../dist/src/config.js';
import { createErrorHandler } from '../dist/src/http/error-response.js';
import { ingestSpans } from '../dist/src/ingest/ingest.js';
import { silentLogger } from '../dist/src/logger.js';
import { openStore } from '../dist/src/open-store.js';
import { createMemoryPayloadStore } from '../dist/src/payloads/memory-payload-store.js';
import { createReplayRoutes } from '../dist/src/replay/index.js';
import { createPgliteDatabase } from '../dist/src/store/pglite-database.js';
import { readTape } from '../dist/src/tapes/tape-service.js';
import { startCassetteServer } from '../dist/src/testing/cassette-server.js';
import { text } from './lib/genai-batch.mjs';

const STEPS = Number(process.argv[2] ?? 2000);
const RUN = 'bench-cassette';
const T0 = 1_764_493_200_000_000_000n;
const dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-bench-cassettes-'));
const newStore = async () =>
  openStore(loadConfig({}), silentLogger(), { db: await createPgliteDatabase(), payloads: createMemoryPayloadStore() });

const parts = (role, content) => ({ role, parts: [{ type: 'text', content }] });
function span(i) {
  return {
    traceId: 'be0c0000000000000000000000000001',
    spanId: (i + 1).toString(16).padStart(16, '0'),
    parentSpanId: null,
    traceState: '',
    flags: 1,
    name: 'chat gpt-4o-mini',
    kind: 'CLIENT',
    startTimeUnixNano: T0 + BigInt(i) * 1_000_000_000n,
    endTimeUnixNano: T0 + BigInt(i) * 1_000_000_000n + 700_000_000n,
    attributes: {
      'session.id': RUN,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.input.messages': JSON.stringify([parts('system', 'You are a bench.'), parts('user', text(1024, i))]),
      'gen_ai.output.messages': JSON.stringify([{ ...parts('assistant', text(300, i + 7)), finish_reason: 'stop' }]),
      'gen_ai.usage.input_tokens': 300,
      'gen_ai.usage.output_tokens': 80,
    },
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: 'UNSET', message: '' },
    resource: { 'service.name': 'bench' },
    resourceDroppedAttributesCount: 0,
    scope: { name: 'bench', version: '', attributes: {} },
    serviceName: 'bench',
  };
}

const source = await newStore();
const spans = Array.from({ length: STEPS }, (_, i) => span(i));
for (let i = 0; i < spans.length; i += 500) await ingestSpans(spans.slice(i, i + 500), { tenant: '' }, source.ingest);
console.log(
  `cassettes: a run of ${STEPS} model steps; node ${process.version}, ${os.cpus().length} cores, load ${os
    .loadavg()
    .map((l) => l.toFixed(1))
    .join(' ')}`,
);

const mb = (bytes) => bytes / 1e6;
let t = performance.now();
const out = await exportCassette(source, '', RUN, { limits: defaultCassetteLimits });
let s = (performance.now() - t) / 1000;
console.log(
  `export: ${(STEPS / s).toFixed(0)} steps/s, ${(mb(out.bytes.length) / s).toFixed(1)} MB/s (${mb(out.bytes.length).toFixed(1)} MB in ${s.toFixed(2)} s)`,
);
const file = path.join(dir, 'bench.tar');
writeFileSync(file, out.bytes);

const target = await newStore();
t = performance.now();
await importCassette(target, await loadCassette(file, defaultCassetteLimits));
s = (performance.now() - t) / 1000;
console.log(
  `import: ${(STEPS / s).toFixed(0)} steps/s, ${(mb(out.bytes.length) / s).toFixed(1)} MB/s (audit, load and write in ${s.toFixed(2)} s)`,
);

// Replay: the same proxy over the store and over the file, loose mode, one client.
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const body = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'next' }] });
function post(url, payload) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () =>
        res.statusCode < 300
          ? resolve(Buffer.concat(chunks))
          : reject(new Error(`${res.statusCode} ${Buffer.concat(chunks)}`)),
      );
    });
    req.on('error', reject);
    req.end(payload);
  });
}
async function callsPerSecond(openaiBase) {
  const started = performance.now();
  for (let i = 0; i < STEPS; i++) await post(`${openaiBase}/chat/completions`, body);
  return STEPS / ((performance.now() - started) / 1000);
}

const app = new Hono();
app.route(
  '/v1/replays',
  createReplayRoutes({
    loadTape: (run) => readTape(source, '', run, { maxSpans: 20_000 }),
    readPayload: (ref) => source.payloads.get(ref),
  }),
);
app.onError(createErrorHandler(silentLogger()));
const server = await new Promise((resolve) => {
  const srv = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(srv));
});
const origin = `http://127.0.0.1:${server.address().port}`;
const created = JSON.parse(await post(`${origin}/v1/replays`, JSON.stringify({ run: RUN, mode: 'loose' })));
const fromStore = await callsPerSecond(created.base_urls.openai);
const fromFile = await startCassetteServer({ cassette: file, mode: 'loose' });
const fromFileRate = await callsPerSecond(fromFile.replay.base_urls.openai);
console.log(
  `replay: from the file ${fromFileRate.toFixed(0)} calls/s, from the store ${fromStore.toFixed(0)} calls/s (${STEPS} plain calls each, one client)`,
);

await fromFile.close();
await new Promise((resolve) => server.close(resolve));
agent.destroy();
await source.close();
await target.close();
rmSync(dir, { recursive: true, force: true });
