// The web console's page loads on a store of 10,000 runs, in Chromium.
//
//   npm run build && node bench/console.mjs [--runs 10000] [--loads 5]
//
// Starts the built CLI on a scratch PostgreSQL database (TAPEDECK_BENCH_DATABASE_URL, else
// TAPEDECK_TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/test), writes the runs
// with SQL (lib/synthetic-runs.mjs), sends 256 more as the ingest bench's export requests
// (8 spans a run, 2 KB prompts) for recall to find, waits for recall's index, then opens each console page `--loads` times in a fresh browser tab (/usr/bin/chromium
// through playwright-core) and times it from navigation to the page's content on screen: the
// runs list's 50 rows, a tape's steps, a tree's graph, a diff's aligned steps, recall's
// results, a replay's status. Prints each page's median and slowest load; exits non-zero when
// a median is over 1 s.
import { chromium } from 'playwright-core';
import { createBatchSource } from './lib/genai-batch.mjs';
import { postExport } from './lib/otlp-sender.mjs';
import { openScratchDatabase } from './lib/scratch-database.mjs';
import { insertSyntheticRuns } from './lib/synthetic-runs.mjs';
import { startTapedeck } from './lib/tapedeck-process.mjs';
import http from 'node:http';
import os from 'node:os';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = arg('runs', 10_000);
const LOADS = arg('loads', 5);
const BUDGET_MS = 1000;
/** export requests of real agent runs (64 runs of 8 spans each) sent through ingest */
const INGESTED_REQUESTS = 4;
const adminUrl =
  process.env.TAPEDECK_BENCH_DATABASE_URL ||
  process.env.TAPEDECK_TEST_DATABASE_URL ||
  'postgres://postgres@127.0.0.1:5432/test';

let server;
let browser;
const scratch = await openScratchDatabase('console', adminUrl, async () => {
  await browser?.close();
  await server?.stop();
});
let failed = false;
try {
  server = await startTapedeck({ databaseUrl: scratch.url, dataDir: scratch.dataDir });
  await scratch.db.connect();
  const base = `http://127.0.0.1:${server.httpPort}`;
  // The store: RUNS runs written with SQL, plus a few requests of real agent runs through
  // ingest, whose prompts recall's index holds.
  let t = performance.now();
  const nowNs = BigInt(Date.now()) * 1_000_000n;
  for (let first = 0; first < RUNS; first += 10_000)
    await insertSyntheticRuns(scratch.db, '', first, Math.min(RUNS, first + 10_000) - 1, nowNs);
  const target = new URL(`${base}/v1/traces`);
  const agent = new http.Agent({ keepAlive: true });
  const source = createBatchSource(2048);
  for (let i = 0; i < INGESTED_REQUESTS; i++) {
    const answer = await postExport(agent, target, source.next(), 60_000);
    if (answer.status !== 200) throw new Error(`export answered ${answer.status}`);
  }
  agent.destroy();
  await scratch.db.query('ANALYZE');
  const api = async (path, init) => {
    const res = await fetch(`${base}${path}`, init);
    if (!res.ok) throw new Error(`${path}: ${res.status} ${await res.text()}`);
    return res.json();
  };
  const stored = (await scratch.db.query('SELECT count(*)::int AS n FROM tapedeck.runs')).rows[0].n;
  console.log(`stored ${stored} runs in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  const newest = (await api('/v1/runs?limit=2')).runs.map((r) => r.run);
  const replay = await api('/v1/replays', {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ run: newest[0], mode: 'loose' }),
  });
  // the API calls the pages wait for longest, alone, for comparison
  const calls = [
    ['GET /v1/runs?limit=50', '/v1/runs?limit=50'],
    ['GET /v1/runs?limit=50&outcome=failure', '/v1/runs?limit=50&outcome=failure'],
    ['GET /v1/tapes/{run}', `/v1/tapes/${encodeURIComponent(newest[0])}`],
    ['GET /v1/recall?q=paris+weather', '/v1/recall?q=paris+weather'],
  ];
  console.log(`\nAPI calls alone, ${LOADS} each (ms)`);
  for (const [name, path] of calls) {
    const times = [];
    for (let i = 0; i < LOADS; i++) {
      t = performance.now();
      await api(path);
      times.push(performance.now() - t);
    }
    times.sort((x, y) => x - y);
    console.log(
      `${name.padEnd(40)} ${times[Math.floor(times.length / 2)].toFixed(0).padStart(7)} ${times[times.length - 1].toFixed(0).padStart(8)}`,
    );
  }
  const pages = [
    ['runs list (50 rows)', '#/', 'table.runs tbody tr:nth-child(50)'],
    ['runs list, failures only', '#/?outcome=failure', 'table.runs tbody tr:nth-child(50)'],
    ['tape', `#/runs/${encodeURIComponent(newest[0])}`, 'ol.steps > li.step'],
    ['run tree', `#/runs/${encodeURIComponent(newest[0])}/tree`, 'svg.graph a.node'],
    ['diff', `#/diff?${new URLSearchParams({ a: newest[0], b: newest[1] })}`, 'table.aligned tbody tr'],
    ['recall "paris weather"', `#/recall?q=${encodeURIComponent('paris weather')}`, 'ol.found > li'],
    ['replay status', `#/replays/${replay.id}`, 'dd.served'],
  ];
  browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(`\npage load, navigation to content shown, ${LOADS} loads each (ms)`);
  console.log(`${'page'.padEnd(26)} ${'median'.padStart(7)} ${'slowest'.padStart(8)}`);
  for (const [name, hash, ready] of pages) {
    const times = [];
    for (let i = 0; i < LOADS; i++) {
      const page = await context.newPage();
      t = performance.now();
      await page.goto(`${base}/${hash}`);
      await page.waitForSelector(ready, { timeout: 30_000 });
      times.push(performance.now() - t);
      await page.close();
    }
    times.sort((x, y) => x - y);
    const median = times[Math.floor(times.length / 2)];
    if (median > BUDGET_MS) failed = true;
    console.log(
      `${name.padEnd(26)} ${median.toFixed(0).padStart(7)} ${times[times.length - 1].toFixed(0).padStart(8)}`,
    );
  }
  console.log(
    `load average ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  console.log(failed ? `\nFAIL: a median is over ${BUDGET_MS} ms` : `\nevery median within ${BUDGET_MS} ms`);
} finally {
  await scratch.cleanup();
}
process.exitCode = failed ? 1 : 0;
