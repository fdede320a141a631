// Diff time for 1k×1k and 5k×5k steps (GET /v1/diff, docs/api.md).
// Run after `npx tsc -p tsconfig.build.json`:  node bench/diff.mjs
//
// Three shapes per size, because the alignment's cost depends on how much two runs share:
// - disjoint:  no signature in common (every pair compared)
// - mixed:     random sequences over 4 signatures (llm + 3 tools), a typical agent's alphabet,
//              so the trimmed middle is the whole run and matches are everywhere
// - reversed:  3 signatures, b counting down where a counts up: everything shared, no common
//              prefix or suffix — the whole n × n table is filled (the alignment's worst case)
// - one-edit:  the same run with one tool step inserted in the middle (prefix/suffix trimming)
// Prints the median and max of several runs, in milliseconds, and the peak heap growth.
import { Deadline } from '../dist/src/deadline/deadline.js';
import { diffRuns } from '../dist/src/diff/diff-runs.js';

const T0 = 1_796_000_000_000_000_000n;
const NOW = T0 + 10n ** 13n;

function step(index, sig, seed) {
  const [kind, name] = sig.split(':');
  const digest = (seed >>> 0).toString(16).padStart(8, '0').repeat(8);
  return {
    index,
    kind,
    name,
    model: kind === 'llm' ? name : null,
    tool: kind === 'tool' ? name : null,
    service: 'bench',
    trace_id: '0'.repeat(32),
    span_id: index.toString(16).padStart(16, '0'),
    parent_span_id: null,
    start_ns: T0 + BigInt(index) * 1_000_000n,
    duration_ns: 500_000n,
    status: 'ok',
    request: null,
    response: null,
    request_digest: digest,
    response_digest: digest,
    fingerprint: `${sig}#${digest.slice(0, 16)}`,
    tokens: { input: 100, output: 10, cache_read: null, cache_write: null, context: 100 },
    params: { temperature: 0.2 },
    layout: 'openllmetry',
    cost_usd: null,
  };
}

function tape(run, sigs, seeds) {
  return {
    run,
    tenant: null,
    spans_examined: sigs.length,
    truncated: false,
    steps: sigs.map((s, i) => step(i, s, seeds[i])),
  };
}

// mulberry32: 32-bit integer arithmetic only (an LCG in doubles loses its low bits)
function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (t ^ (t >>> 14)) >>> 0;
  };
}

function shapes(n) {
  const rand = rng(n);
  const alphabet = ['llm:gpt-4o', 'tool:search', 'tool:fetch', 'tool:write'];
  const mixed = () => Array.from({ length: n }, () => alphabet[rand() % alphabet.length]);
  const seeds = () => Array.from({ length: n + 1 }, () => rand());
  const base = mixed();
  const edited = [...base.slice(0, n / 2), 'tool:extra', ...base.slice(n / 2, n - 1)];
  const s = seeds();
  return {
    disjoint: [
      tape(
        'a',
        Array.from({ length: n }, (_, i) => `tool:a${i}`),
        seeds(),
      ),
      tape(
        'b',
        Array.from({ length: n }, (_, i) => `tool:b${i}`),
        seeds(),
      ),
    ],
    mixed: [tape('a', mixed(), seeds()), tape('b', mixed(), seeds())],
    reversed: [
      tape(
        'a',
        Array.from({ length: n }, (_, i) => `tool:t${i % 3}`),
        seeds(),
      ),
      tape(
        'b',
        Array.from({ length: n }, (_, i) => `tool:t${2 - (i % 3)}`),
        seeds(),
      ),
    ],
    'one-edit': [tape('a', base, s), tape('b', edited, s)],
  };
}

function measure(a, b, rounds) {
  const times = [];
  let entries = 0;
  for (let r = 0; r < rounds; r++) {
    const started = performance.now();
    const diff = diffRuns(a, b, { deadline: new Deadline(60_000), pricing: null, nowNs: NOW });
    times.push(performance.now() - started);
    entries = diff.aligned.length;
  }
  times.sort((x, y) => x - y);
  return { median: times[Math.floor(times.length / 2)], max: times[times.length - 1], entries };
}

console.log(`node ${process.version}, ${process.platform}/${process.arch}`);
console.log('size        shape      entries   median ms   max ms');
for (const n of [1000, 5000]) {
  for (const [name, [a, b]] of Object.entries(shapes(n))) {
    measure(a, b, 2); // warm up
    const { median, max, entries } = measure(a, b, n === 1000 ? 15 : 7);
    console.log(
      `${`${n}x${n}`.padEnd(12)}${name.padEnd(11)}${String(entries).padStart(7)}${median.toFixed(1).padStart(12)}${max.toFixed(1).padStart(9)}`,
    );
  }
}
