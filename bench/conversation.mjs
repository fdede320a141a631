// Conversations: agents resend the whole history on every model call, so a run of n calls
// sends about n² messages while it holds 2n. For each length (10, 50, 100 and 200 model calls
// by default, 2 KB messages, bench/lib/conversation-runs.mjs), on a fresh database and a fresh
// `tapedeck serve` (deriving, as in production), the bench sends the same export requests
// through:
//   - raw: tapedeck's decoder, SHA-256 of each span's content and a binary COPY of the span
//     rows into a table like tapedeck_store.spans (bench/lib/raw-ingest.mjs), before and after
//     tapedeck's phase (the mean of the two, so a drifting machine weighs on both sides);
//   - tapedeck: 4 concurrent senders; "acknowledged" is the spans over the time to the last
//     200, "sustained" adds the time recall's index took to catch up afterwards;
//   - spans only: a second server on the same database with `--derive off` (decode, dedupe,
//     binary COPY of the spans, commit), sent runs of their own afterwards: what storing the
//     raw spans whole costs before anything is derived from them: the ceiling of tapedeck's
//     share. Its first two requests warm it up; the rest, with the longer histories, are
//     measured, so its figures lean low.
// Each figure also as CPU: the seconds the server and its PostgreSQL backends (raw: this
// process and its COPY backends) spent on the same spans, which a busy machine distorts far
// less than spans/s; "raw/tapedeck" is the share of raw's throughput that CPU allows.
// Then it measures what the runs cost on disk: every table of tapedeck_store (with its TOAST
// and indexes, pg_total_relation_size after VACUUM) and every file under the data directory
// (offloaded payloads), less what they held before the phase, per run. "Derived" is all but
// the raw spans and log records (the tables spans and logs): steps, messages, recall's index,
// payload files, whatever their tables are called; then the same bytes by relation (a table's
// heap, its TOAST, each index). "In use" counts the data forks less their pages that hold
// nothing, as VACUUM recorded them (pg_freespacemap): chiefly those recall's words index
// flushed its pending list from, up to its 4 MB limit whatever the store holds, which the next
// inserts reuse; a length of few runs (100 calls: 5) carries a share of them per run that one
// of many does not.
// The 100-call/10-call line is measured (100 is one of the default lengths), not extrapolated.
//
// Build first (`npm run build`), then: node bench/conversation.mjs
// Settings: BENCH_QUICK=1 (a quarter of the bytes), BENCH_CONVERSATION_LENGTHS (e.g. "10,100"),
// BENCH_CONVERSATION_MB (request bytes per length, 96 by default: at least one run each),
// BENCH_CONVERSATION_SIDE_BY_SIDE (runs whose requests are interleaved, 4 by default),
// BENCH_DATABASE_URL (where to create the databases), BENCH_RESULT_FILE (the figures as JSON),
// BENCH_SERVE_NODE_ARGS (Node options for the server, e.g. --cpu-prof).
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { conversationRequests } from './lib/conversation-runs.mjs';
import { sendAll } from './lib/otlp-sender.mjs';
import { createRawIngest } from './lib/raw-ingest.mjs';
import { recallCaughtUp } from './lib/recall-caught-up.mjs';
import { openScratchDatabase } from './lib/scratch-database.mjs';
import { cpuSecondsOfAll, sampleMemory, serverCpuMeter, startTapedeck } from './lib/tapedeck-process.mjs';

const QUICK = process.env.BENCH_QUICK === '1';
const LENGTHS = (process.env.BENCH_CONVERSATION_LENGTHS ?? '10,50,100,200').split(',').map(Number);
const MB = Number(process.env.BENCH_CONVERSATION_MB ?? (QUICK ? 24 : 96));
const MESSAGE_BYTES = 2048;
const SENDERS = 4;
// Runs sent side by side, one per sender by default (at least that many runs per length):
// their requests interleaved, as separate agents send theirs. With 1 the runs go in order and
// a long run's requests are all in flight at once: one trace's transactions take turns.
const SIDE_BY_SIDE = Number(process.env.BENCH_CONVERSATION_SIDE_BY_SIDE ?? SENDERS);
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const RAW_TABLES = new Set(['spans', 'logs']);
const MiB = 1024 * 1024;
const fmt = (n) => Math.round(n).toLocaleString('en-US');
const kb = (n) => `${fmt(n / 1024)} KB`;
const pct = (x) => `${(x * 100).toFixed(0)}%`;
const inUseKb = (r) => (r.derivedInUsePerRun === null ? 'unknown: no pg_freespacemap' : kb(r.derivedInUsePerRun));

console.log(
  `conversation: runs of ${LENGTHS.join(', ')} model calls resending the history, ${MESSAGE_BYTES} B messages, ~${MB} MB of requests per length, ${SENDERS} senders, ${SIDE_BY_SIDE} run(s) side by side`,
);
const results = [];
let seed = 0;
for (const calls of LENGTHS) {
  // a run of n calls sends the system prompt and n(n+1) messages of MESSAGE_BYTES in all
  const runs = Math.max(SIDE_BY_SIDE, Math.round((MB * 1e6) / (calls * (calls + 1) * MESSAGE_BYTES)));
  const warmup = conversationRequests({ runs: 20, calls: 10, messageBytes: MESSAGE_BYTES, firstSeed: seed });
  seed += 20;
  const requests = sideBySide(runs, calls, seed);
  seed += runs;
  const spansOnly = sideBySide(runs, calls, seed);
  seed += runs;
  results.push(await measure(calls, runs, warmup, requests, spansOnly));
}

console.log('');
console.log(
  `${'calls'.padStart(5)} ${'runs'.padStart(5)} ${'spans'.padStart(7)} ${'MB'.padStart(5)} ${'raw sp/s'.padStart(9)} ${'ack'.padStart(5)} ${'sustained'.padStart(9)} ${'cpu: ack'.padStart(8)} ${'sust.'.padStart(5)} ${'spans only'.padStart(10)} ${'peak RSS'.padStart(9)} ${'derived/run'.padStart(12)} ${'with raw/run'.padStart(13)}`,
);
for (const r of results) {
  console.log(
    `${String(r.calls).padStart(5)} ${String(r.runs).padStart(5)} ${fmt(r.spans).padStart(7)} ${(r.requestBytes / 1e6).toFixed(0).padStart(5)} ${fmt(r.rawRate).padStart(9)} ` +
      `${`${(r.ackRatio * 100).toFixed(0)}%`.padStart(5)} ${pct(r.sustainedRatio).padStart(9)} ${pct(r.rawCpu / r.ackCpu).padStart(8)} ${pct(r.rawCpu / r.sustainedCpu).padStart(5)} ${pct(r.spansOnlyRatio).padStart(10)} ${`${Math.round(r.peakRss / MiB)} MiB`.padStart(9)} ` +
      `${kb(r.derivedPerRun).padStart(12)} ${kb(r.withRawPerRun).padStart(13)}`,
  );
}
const of = (n) => results.find((r) => r.calls === n);
if (of(10) && of(100)) {
  console.log(
    `stored per run, 100 calls / 10 calls: derived ${(of(100).derivedPerRun / of(10).derivedPerRun).toFixed(1)}x ` +
      `(in use ${of(10).derivedInUsePerRun ? `${(of(100).derivedInUsePerRun / of(10).derivedInUsePerRun).toFixed(1)}x` : 'unknown'}), ` +
      `with raw spans ${(of(100).withRawPerRun / of(10).withRawPerRun).toFixed(1)}x (linear: 10x, quadratic: about 100x)`,
  );
} else {
  console.log('stored per run, 100 calls / 10 calls: run with 10 and 100 in BENCH_CONVERSATION_LENGTHS');
}
if (process.env.BENCH_RESULT_FILE) writeFileSync(process.env.BENCH_RESULT_FILE, JSON.stringify(results, null, 2));

/** The requests of `runs` runs, SIDE_BY_SIDE runs' requests interleaved, one of each in turn. */
function sideBySide(runs, calls, firstSeed) {
  const lists = [];
  for (let i = 0, seed = firstSeed; i < SIDE_BY_SIDE; i++) {
    const share = Math.floor(runs / SIDE_BY_SIDE) + (i < runs % SIDE_BY_SIDE ? 1 : 0);
    lists.push(conversationRequests({ runs: share, calls, messageBytes: MESSAGE_BYTES, firstSeed: seed }));
    seed += share;
  }
  const out = [];
  const longest = Math.max(...lists.map((l) => l.length));
  for (let at = 0; at < longest; at++) for (const list of lists) if (at < list.length) out.push(list[at]);
  return out;
}

async function measure(calls, runs, warmup, requests, spansOnlyRequests) {
  let server;
  const scratch = await openScratchDatabase(`conversation${calls}`, ADMIN_URL, async () => server?.stop());
  const { db } = scratch;
  try {
    await db.connect();
    // free space in relations (pg_freespacemap, shipped with PostgreSQL): the "in use" bytes
    const freeSpaceKnown = await db
      .query('CREATE EXTENSION IF NOT EXISTS pg_freespacemap')
      .then(() => true)
      .catch(() => false);
    server = await startTapedeck({
      databaseUrl: scratch.url,
      dataDir: scratch.dataDir,
      nodeArgs: (process.env.BENCH_SERVE_NODE_ARGS ?? '').split(' ').filter(Boolean),
    });
    const url = `http://127.0.0.1:${server.httpPort}/v1/traces`;
    const raw = await createRawIngest(scratch.url, SENDERS);
    try {
      const memory = sampleMemory(server.pid);
      // warm-up, not measured: JIT, connection pools, the first pages of every index
      await sendAll({ url, requests: warmup, senders: SENDERS });
      await recallCaughtUp(db, server);
      await raw.runAll(warmup.map((r) => r.body));
      const bodies = requests.map((r) => r.body);
      const rawPhase = async () => {
        await db.query('TRUNCATE bench_raw.spans');
        await db.query('CHECKPOINT');
        const own0 = process.cpuUsage();
        const pg0 = cpuSecondsOfAll(raw.backendPids);
        const w = await raw.runAll(bodies);
        const own = process.cpuUsage(own0);
        w.cpu = (own.user + own.system) / 1e6 + cpuSecondsOfAll(raw.backendPids) - pg0;
        return w;
      };
      await db.query('VACUUM');
      const before = await storedBytes(db, scratch.dataDir, freeSpaceKnown);
      const raw1 = await rawPhase();
      await db.query('CHECKPOINT');
      const ackMeter = await serverCpuMeter(db, server.pid);
      const ack = await sendAll({ url, requests, senders: SENDERS });
      const ackSpent = await ackMeter();
      const ackServerCpu = ackSpent.server;
      const ackCpu = ackSpent.server + ackSpent.pg;
      const catchUp = await recallCaughtUp(db, server);
      const raw2 = await rawPhase();
      const mem = memory.stop();
      await db.query('TRUNCATE bench_raw.spans');
      await db.query('VACUUM');
      const after = await storedBytes(db, scratch.dataDir, freeSpaceKnown);
      const spansOnly = await spansOnlyPhase(scratch, db, spansOnlyRequests);

      const spans = ack.spans;
      const rawRate = (raw1.spans / raw1.elapsed + raw2.spans / raw2.elapsed) / 2;
      const ackRate = spans / ack.elapsed;
      const sustainedRate = spans / (ack.elapsed + catchUp.seconds);
      const grew = (name) => (after.byName.get(name) ?? 0) - (before.byName.get(name) ?? 0);
      const names = [...after.byName.keys()];
      const derived = names.filter((n) => !RAW_TABLES.has(n)).reduce((s, n) => s + grew(n), 0);
      const usedGrew = (name) => (after.usedByName.get(name) ?? 0) - (before.usedByName.get(name) ?? 0);
      const derivedInUse = names.filter((n) => !RAW_TABLES.has(n)).reduce((s, n) => s + usedGrew(n), 0);
      const rawBytes = names.filter((n) => RAW_TABLES.has(n)).reduce((s, n) => s + grew(n), 0);
      const parts = names
        .filter((n) => !RAW_TABLES.has(n) && grew(n) >= 8192 * runs)
        .sort((a, b) => grew(b) - grew(a))
        .map((n) => `${n} ${kb(grew(n) / runs)}`);
      const relationGrew = (name) =>
        (after.byRelation.get(name)?.bytes ?? 0) - (before.byRelation.get(name)?.bytes ?? 0);
      const relations = [...after.byRelation.keys()]
        .filter((n) => !RAW_TABLES.has(after.byRelation.get(n).table) && relationGrew(n) >= 8192 * runs)
        .sort((a, b) => relationGrew(b) - relationGrew(a))
        .map((n) => `${n} ${kb(relationGrew(n) / runs)}`);
      const result = {
        calls,
        runs,
        spans,
        requestBytes: ack.bytes,
        rawRate,
        ackRate,
        sustainedRate,
        ackRatio: ackRate / rawRate,
        sustainedRatio: sustainedRate / rawRate,
        // CPU seconds for the same spans: what a busy machine distorts far less than spans/s
        rawCpu: (raw1.cpu + raw2.cpu) / 2,
        ackCpu,
        sustainedCpu: ackCpu + catchUp.serverCpu + catchUp.pgCpu,
        catchUpSeconds: catchUp.seconds,
        spansOnlyRate: spansOnly.rate,
        spansOnlyRatio: spansOnly.rate / rawRate,
        spansOnlyCpu: spansOnly.cpu,
        retries: ack.retries,
        peakRss: Math.max(mem.hwm, mem.sampledPeak),
        derivedPerRun: derived / runs,
        derivedInUsePerRun: freeSpaceKnown ? derivedInUse / runs : null,
        rawSpansPerRun: rawBytes / runs,
        withRawPerRun: (derived + rawBytes) / runs,
        derivedParts: parts,
        derivedRelations: relations,
      };
      console.log(
        `  ${calls} calls: ${runs} run(s), ${fmt(spans)} spans, ${(ack.bytes / 1e6).toFixed(0)} MB; raw ${fmt(rawRate)} spans/s (${fmt(raw1.spans / raw1.elapsed)} before, ${fmt(raw2.spans / raw2.elapsed)} after); ` +
          `tapedeck acknowledged ${fmt(ackRate)} spans/s (${(result.ackRatio * 100).toFixed(0)}% of raw${ack.retries ? `, ${ack.retries} busy answers` : ''}), ` +
          `recall's index caught up ${catchUp.seconds.toFixed(1)} s later: sustained ${fmt(sustainedRate)} spans/s (${(result.sustainedRatio * 100).toFixed(0)}%); ` +
          `peak RSS ${Math.round(result.peakRss / MiB)} MiB`,
      );
      console.log(
        `    cpu (server and postgres backends): raw ${result.rawCpu.toFixed(1)} s, tapedeck acknowledging ${ackCpu.toFixed(1)} s (server ${ackServerCpu.toFixed(1)}; raw/tapedeck ${pct(result.rawCpu / ackCpu)}), ` +
          `with recall caught up ${result.sustainedCpu.toFixed(1)} s (${pct(result.rawCpu / result.sustainedCpu)}); ` +
          `spans only (--derive off, runs of its own) ${fmt(spansOnly.rate)} spans/s (${pct(result.spansOnlyRatio)} of raw), cpu ${spansOnly.cpu.toFixed(1)} s (${pct(result.rawCpu / spansOnly.cpu)})`,
      );
      console.log(
        `    stored per run: derived ${kb(result.derivedPerRun)} (${parts.join(', ') || 'nothing'}; in use ${inUseKb(result)}), raw spans ${kb(result.rawSpansPerRun)}, with raw spans ${kb(result.withRawPerRun)}`,
      );
      console.log(`    derived by relation, per run: ${relations.join(', ') || 'nothing'}`);
      return result;
    } finally {
      await raw.close();
    }
  } finally {
    await scratch.cleanup();
  }
}

/**
 * The same database through a second server with --derive off, sent runs none of the first
 * holds (after a warm-up of its own): spans/s acknowledged and the CPU seconds of the server
 * and the database's backends for them.
 */
async function spansOnlyPhase(scratch, db, requests) {
  const server = await startTapedeck({
    databaseUrl: scratch.url,
    dataDir: path.join(scratch.dataDir, 'spans-only'),
    args: ['--derive', 'off'],
  });
  try {
    const url = `http://127.0.0.1:${server.httpPort}/v1/traces`;
    await sendAll({ url, requests: requests.slice(0, 2), senders: SENDERS });
    const measured = requests.slice(2);
    await db.query('CHECKPOINT');
    const meter = await serverCpuMeter(db, server.pid);
    const sent = await sendAll({ url, requests: measured, senders: SENDERS });
    const spent = await meter();
    const cpu = spent.server + spent.pg;
    // CPU scaled to as many spans as the other phases sent (the warm-up's are not measured,
    // and theirs are the cheapest spans, with the shortest histories)
    return { rate: sent.spans / sent.elapsed, cpu: (cpu * requests.reduce((s, r) => s + r.spans, 0)) / sent.spans };
  } finally {
    await server.stop();
  }
}

/**
 * Bytes of each tapedeck_store table (TOAST and indexes included) and, as "payload files", of
 * the data directory; and of each relation apart: a table's heap, its TOAST, each index.
 */
async function storedBytes(db, dataDir, freeSpaceKnown) {
  // a relation's main fork less its pages that hold nothing, as VACUUM recorded them (the
  // pages a GIN's pending list was flushed from, emptied index pages): free space within a
  // page that holds rows still counts
  const inUse = (oid) =>
    freeSpaceKnown
      ? `pg_relation_size(${oid}, 'main') - current_setting('block_size')::int *
           (SELECT count(*) FROM pg_freespace(${oid}) f WHERE f.avail >= current_setting('block_size')::int - 64)`
      : 'NULL::bigint';
  const { rows } = await db.query(
    // a partition (spans and log records by day) counts under its partitioned table's name,
    // a partition's index under its partitioned index's
    `SELECT coalesce(root.relname, c.relname) AS name, r.relation, sum(r.bytes)::bigint AS bytes,
            sum(r.used)::bigint AS used
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_class root ON root.oid = pg_partition_root(c.oid)
       CROSS JOIN LATERAL (
         SELECT coalesce(root.relname, c.relname) || ' heap' AS relation,
                pg_table_size(c.oid) - coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0) AS bytes,
                ${inUse('c.oid')} AS used
         UNION ALL
         SELECT coalesce(root.relname, c.relname) || ' TOAST', pg_total_relation_size(c.reltoastrelid),
                ${inUse('c.reltoastrelid')}
                + (SELECT sum(${inUse('ti.indexrelid')}) FROM pg_index ti WHERE ti.indrelid = c.reltoastrelid)
          WHERE c.reltoastrelid <> 0
         UNION ALL
         SELECT coalesce(ir.relname, ic.relname), pg_total_relation_size(i.indexrelid), ${inUse('i.indexrelid')}
           FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
           LEFT JOIN pg_class ir ON ir.oid = pg_partition_root(i.indexrelid)
          WHERE i.indrelid = c.oid
       ) r
      WHERE n.nspname = 'tapedeck_store' AND c.relkind = 'r'
      GROUP BY 1, 2`,
  );
  const byName = new Map();
  const usedByName = new Map();
  const byRelation = new Map();
  for (const r of rows) {
    byName.set(r.name, (byName.get(r.name) ?? 0) + Number(r.bytes));
    usedByName.set(r.name, (usedByName.get(r.name) ?? 0) + Number(r.used));
    byRelation.set(r.relation, { table: r.name, bytes: Number(r.bytes) });
  }
  const files = filesBytes(dataDir);
  byName.set('payload files', files);
  usedByName.set('payload files', files);
  return { byName, usedByName, byRelation };
}

function filesBytes(dir) {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) total += filesBytes(p);
    else if (entry.isFile()) total += statSync(p).size;
  }
  return total;
}
