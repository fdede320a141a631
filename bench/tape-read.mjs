// Reading a long tape: `GET /v1/tapes/{run}` from the built `tapedeck serve` (PostgreSQL) for
// a run of 10,000 model calls (each a system prompt and a ~256 B user message, and an answer,
// bench/lib/conversation-runs.mjs without the resent history), against a bare indexed SELECT
// of the same rows by this process with `pg`: the run's steps joined to their spans through
// the (tenant, run_id, start_ns) index, in start order, every column read into objects. The
// difference is what the tape costs over the rows: the span tree, ordering, assembly, JSON
// rendering and the HTTP answer. Reads alternate, after a warm-up; prints the median time of
// each (a tape's to the last byte of its answer), the median of the per-pair ratios and the
// CPU per read (server and its backends; bare: this process and its backend).
//
// Build first (`npm run build`), then: node bench/tape-read.mjs [steps] [reads]
// (10,000 and 7 by default). BENCH_DATABASE_URL: where to create the scratch database.
import path from 'node:path';
import { loadavg } from 'node:os';
import http from 'node:http';
import { conversationRequests } from './lib/conversation-runs.mjs';
import { sendAll } from './lib/otlp-sender.mjs';
import { recallCaughtUp } from './lib/recall-caught-up.mjs';
import { openScratchDatabase } from './lib/scratch-database.mjs';
import { cpuSecondsOf, serverCpuMeter, startTapedeck } from './lib/tapedeck-process.mjs';

const STEPS = Number(process.argv[2] ?? 10_000);
const READS = Number(process.argv[3] ?? 7);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

let server;
const scratch = await openScratchDatabase('tape_read', ADMIN_URL, async () => server?.stop());
const { db } = scratch;
try {
  await db.connect();
  server = await startTapedeck({
    databaseUrl: scratch.url,
    dataDir: path.join(scratch.dataDir, 'tapedeck'),
    // BENCH_CPU_PROF=DIR: the server's CPU profile (node --cpu-prof), to see where a read goes
    nodeArgs: process.env.BENCH_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.BENCH_CPU_PROF] : [],
  });
  const base = `http://127.0.0.1:${server.httpPort}`;
  const requests = conversationRequests({ runs: 1, calls: STEPS, messageBytes: 256, history: false });
  await sendAll({ url: `${base}/v1/traces`, requests, senders: 2 });
  await recallCaughtUp(db, server);
  await db.query('VACUUM ANALYZE');
  const { rows } = await db.query(
    `SELECT run_id AS run, count(*)::int AS spans FROM tapedeck_store.spans GROUP BY run_id ORDER BY 2 DESC LIMIT 1`,
  );
  const { run } = rows[0];
  const ownPid = (await db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid;

  const agent = new http.Agent({ keepAlive: true });
  const apiRead = async () => {
    const meter = await serverCpuMeter(db, server.pid);
    const t0 = performance.now();
    const { status, body, receivedAt } = await get(agent, `${base}/v1/tapes/${encodeURIComponent(run)}`);
    const ms = receivedAt - t0;
    if (status !== 200) throw new Error(`GET /v1/tapes answered ${status}: ${body.subarray(0, 300)}`);
    const spent = await meter();
    const serverCpu = spent.server;
    const cpu = spent.server + spent.pg;
    return { ms, cpu, serverCpu, bytes: body.length, steps: JSON.parse(body).steps.length };
  };
  // The same rows: every column the tape shows, a message list's ids as text, then the
  // messages those lists name, each once (the tape's text is theirs).
  const idList = (c) => `array_to_string(${c}, ',')`;
  const bareRead = async () => {
    const own0 = process.cpuUsage();
    const pg0 = cpuSecondsOf(ownPid);
    const t0 = performance.now();
    const result = await db.query(
      `SELECT encode(st.trace_id, 'hex') AS trace_id, encode(st.span_id, 'hex') AS span_id,
              encode(s.parent_span_id, 'hex') AS parent_span_id, st.kind, st.name, st.model, st.tool,
              st.tool_call_id, s.service_name, s.start_ns, s.end_ns, st.status, st.request, st.response,
              ${idList('st.request_messages')} AS request_messages, ${idList('st.response_messages')} AS response_messages,
              st.request_digest, st.response_digest, st.fingerprint, st.tokens_input, st.tokens_output,
              st.tokens_cache_read, st.tokens_cache_write, st.tokens_context, st.params, st.layout, st.cost_usd
         FROM tapedeck_store.spans s JOIN tapedeck_store.steps st USING (tenant, trace_id, span_id)
        WHERE s.tenant = '' AND s.run_id = $1
        ORDER BY s.start_ns, s.span_id`,
      [run],
    );
    const ids = new Set();
    for (const r of result.rows)
      for (const list of [r.request_messages, r.response_messages])
        if (list) for (const d of list.split(',')) ids.add(d);
    const messages = await db.query(
      `SELECT id::text AS id, body FROM tapedeck_store.messages WHERE tenant = '' AND id = ANY($1::bigint[])`,
      [`{${[...ids].join(',')}}`],
    );
    const ms = performance.now() - t0;
    const own = process.cpuUsage(own0);
    return {
      ms,
      cpu: (own.user + own.system) / 1e6 + cpuSecondsOf(ownPid) - pg0,
      clientCpu: (own.user + own.system) / 1e6,
      steps: result.rows.length,
      messages: messages.rows.length,
    };
  };
  // Today's figure before the message store's text was counted: the step rows alone, no message text.
  const rowsOnlyRead = async () => {
    const own0 = process.cpuUsage();
    const pg0 = cpuSecondsOf(ownPid);
    const t0 = performance.now();
    const result = await db.query(
      `SELECT st.*, s.parent_span_id, s.start_ns, s.end_ns, s.service_name
         FROM tapedeck_store.spans s JOIN tapedeck_store.steps st USING (tenant, trace_id, span_id)
        WHERE s.tenant = '' AND s.run_id = $1
        ORDER BY s.start_ns, s.span_id`,
      [run],
    );
    const ms = performance.now() - t0;
    const own = process.cpuUsage(own0);
    return { ms, cpu: (own.user + own.system) / 1e6 + cpuSecondsOf(ownPid) - pg0, steps: result.rows.length };
  };

  for (let i = 0; i < 2; i++) {
    await apiRead();
    await bareRead();
    await rowsOnlyRead();
  }
  const api = [];
  const bare = [];
  const rowsOnly = [];
  for (let i = 0; i < READS; i++) {
    api.push(await apiRead());
    bare.push(await bareRead());
    rowsOnly.push(await rowsOnlyRead());
  }
  agent.destroy();
  const ms = (list) => median(list.map((a) => a.ms)).toFixed(0);
  const cpu = (list) => (median(list.map((a) => a.cpu)) * 1000).toFixed(0);
  const ratios = (base) =>
    `${median(api.map((a, i) => a.ms / base[i].ms)).toFixed(2)}x the time, ${median(api.map((a, i) => a.cpu / base[i].cpu)).toFixed(2)}x the cpu`;
  console.log(
    `tape of ${api[0].steps.toLocaleString('en-US')} steps (${(api[0].bytes / 1e6).toFixed(1)} MB of JSON; the SELECT: ${bare[0].steps.toLocaleString('en-US')} rows and ${bare[0].messages.toLocaleString('en-US')} messages), ${READS} reads each, load ${loadavg()
      .map((l) => l.toFixed(1))
      .join(' ')}`,
  );
  const serverCpu = (median(api.map((a) => a.serverCpu)) * 1000).toFixed(0);
  console.log(`GET /v1/tapes/{run}: median ${ms(api)} ms, cpu ${cpu(api)} ms (server ${serverCpu}, the rest postgres)`);
  const clientCpu = (median(bare.map((a) => a.clientCpu)) * 1000).toFixed(0);
  console.log(
    `bare indexed SELECT, rows and messages: median ${ms(bare)} ms, cpu ${cpu(bare)} ms (this process ${clientCpu}, the rest postgres)`,
  );
  console.log(`bare step rows alone (no message text): median ${ms(rowsOnly)} ms, cpu ${cpu(rowsOnly)} ms`);
  console.log(
    `tape / SELECT: ${ratios(bare)}; over the step rows alone ${ratios(rowsOnly)} (medians of per-pair ratios)`,
  );
} finally {
  await scratch.cleanup();
}

/**
 * GET, resolving with the status, the whole body and when its last byte arrived: joining the
 * chunks into one buffer afterwards is this client's own cost, not the answer's
 * (docs/benchmarks.md, "Conversations, tape read, replay, replicas").
 */
function get(agent, url) {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () => {
          const receivedAt = performance.now();
          resolve({ status: res.statusCode, body: Buffer.concat(chunks), receivedAt });
        });
        res.on('error', reject);
      })
      .on('error', reject);
  });
}
