// `npm run bench`: runs every bench in bench/*.mjs in turn, each as its own child process (a
// fresh heap and its own database, so one cannot skew the next), streams their output, and
// ends with a summary: status, time and each bench's closing lines. Each starts once the
// machine has settled after the one before.
// Known benches run in a fixed order with their arguments; a bench added later (any other
// bench/*.mjs) runs after them with none. BENCH_QUICK=1 asks each for a short run;
// BENCH_ONLY=ingest,normalize runs only those. docs/benchmarks.md says what each measures.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const QUICK = process.env.BENCH_QUICK === '1';
const only = process.env.BENCH_ONLY?.split(',')
  .map((s) => s.trim())
  .filter(Boolean);

// name → arguments (full, quick) and a time limit, past which a bench is stopped (ingest,
// which waits for recall's index after each phase, takes the longest)
const KNOWN = [
  { name: 'otlp-decode', args: ['3'], quick: ['1'], limitS: 60 },
  { name: 'normalize', args: [], quick: [], limitS: 60 },
  { name: 'ingest', args: [], quick: [], limitS: 1200 },
  { name: 'conversation', args: [], quick: [], limitS: 1200 },
  { name: 'diff', args: [], quick: [], limitS: 120 },
  { name: 'replay', args: [], quick: ['500'], limitS: 120 },
  { name: 'tape-read', args: [], quick: ['2000', '3'], limitS: 600 },
  { name: 'cassettes', args: [], quick: ['300'], limitS: 180 },
  { name: 'recall', args: [], quick: [], env: QUICK ? { BENCH_SPANS: '100000' } : {}, limitS: 240 },
  { name: 'dataset', args: [], quick: ['--runs', '10000'], limitS: 180 },
  { name: 'overload', args: [], quick: [], limitS: 300 },
  { name: 'replicas', args: [], quick: [], limitS: 600 },
  { name: 'console', args: [], quick: ['--runs', '2000', '--loads', '3'], limitS: 600 },
];

/** Before each bench, busy below this share of all cores counts as settled (settle). */
const SETTLE_BUSY = 0.2;
const SETTLE_MAX_S = 60;

const present = new Set(
  readdirSync(here)
    .filter((f) => f.endsWith('.mjs') && f !== 'run.mjs')
    .map((f) => f.slice(0, -4)),
);
const plan = [
  ...KNOWN.filter((b) => present.has(b.name)),
  ...[...present]
    .filter((n) => !KNOWN.some((b) => b.name === n))
    .sort()
    .map((name) => ({ name, args: [], quick: [], limitS: 180 })),
].filter((b) => !only || only.includes(b.name));

if (!existsSync(path.join(here, '..', 'dist', 'src', 'index.js'))) {
  console.error('bench: dist/ is missing; run `npm run build` first (npm run bench does)');
  process.exit(1);
}

console.log(`bench: ${plan.map((b) => b.name).join(', ')}${QUICK ? ' (BENCH_QUICK=1)' : ''}; node ${process.version}`);
const results = [];
for (const b of plan) {
  console.log(`\n=== ${b.name}`);
  await settle();
  results.push(await runBench(b));
}

console.log('\n=== summary');
for (const r of results) {
  console.log(`${r.name.padEnd(12)} ${r.status.padEnd(8)} ${`${r.seconds.toFixed(0)} s`.padStart(6)}`);
  for (const line of r.tail) console.log(`    ${line}`);
}
const total = results.reduce((s, r) => s + r.seconds, 0);
console.log(`total ${Math.round(total)} s`);
process.exitCode = results.every((r) => r.status === 'ok') ? 0 : 1;

function runBench(b) {
  return new Promise((resolve) => {
    const started = performance.now();
    const child = spawn(process.execPath, [path.join(here, `${b.name}.mjs`), ...(QUICK ? b.quick : b.args)], {
      cwd: path.join(here, '..'),
      env: { ...process.env, ...(b.env ?? {}) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c) => {
      process.stdout.write(c);
      out = (out + c).slice(-20_000);
    });
    child.stderr.on('data', (c) => process.stderr.write(c));
    let timedOut = false;
    // SIGTERM first so the bench can drop its database; SIGKILL if it does not go.
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill('SIGTERM');
      setTimeout(() => child.kill('SIGKILL'), 15_000).unref();
    }, b.limitS * 1000);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const status = timedOut ? 'timeout' : code === 0 ? 'ok' : `failed (${signal ?? code})`;
      resolve({
        name: b.name,
        status,
        seconds: (performance.now() - started) / 1000,
        tail: closingLines(out, b.name === 'ingest' ? 6 : 3),
      });
    });
  });
}

/**
 * Waits, up to SETTLE_MAX_S, until the machine is mostly idle, so that no bench (the console's
 * has a bound on time) pays for work another left running. Busy is measured over a second
 * from /proc/stat, not the load average, which trails by a minute. Where there is no
 * /proc/stat it does not wait.
 */
async function settle() {
  const cpu = () => {
    try {
      const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
      return { idle: fields[3] + (fields[4] ?? 0), total: fields.reduce((a, b) => a + b, 0) };
    } catch {
      return null;
    }
  };
  const started = performance.now();
  for (;;) {
    const before = cpu();
    if (!before) return;
    await new Promise((r) => setTimeout(r, 1000));
    const after = cpu();
    const busy = 1 - (after.idle - before.idle) / Math.max(1, after.total - before.total);
    const waited = (performance.now() - started) / 1000;
    if (busy < SETTLE_BUSY || waited >= SETTLE_MAX_S) {
      if (waited > 1.5)
        console.log(`(waited ${waited.toFixed(0)} s for the machine to settle: ${Math.round(busy * 100)} % busy)`);
      return;
    }
  }
}

function closingLines(text, n) {
  return text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '')
    .slice(-n);
}
