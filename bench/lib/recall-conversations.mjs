// The recall bench's store, made in JavaScript: conversations as agents send them (each model
// call's request is the system prompt and the run's whole history so far, its response the
// next answer; bench/lib/conversation-runs.mjs), and the answer every query must get,
// computed from the generated runs alone (no SQL), to prove recall's answers.
//
// Run r is trace r: a root span (i = 0, failed when r % 10 = 3) and CALLS model calls
// (i = k, 1..CALLS). Call k sends [system, u1, a1, ..., uk] and receives [ak], so the
// messages of a run have positions u1 = 0, a1 = 1, ..., uk = 2k - 2, ak = 2k - 1 and call k
// holds every message up to position 2k - 1 (the system prompt, shared by every run, at -1).
// Each user and assistant message holds DRAWS words drawn log-uniformly from w1..w<VOCABULARY>
// (seeded), so wN is in about 1/N of the draws; u1 also holds the run's topic word
// (topic<r % 10000>); some messages hold a phrase of the recall tests' fixtures (PHRASES) or
// Chinese text (明天北京天气预报 whole, or its pairs split apart, which only the in-order check
// tells from it).
//
// The answer follows from positions: a word's first position in run r (-1 when in every call:
// the system prompt or a call's own name) makes calls k >= (first + 1) / 2 hold it, and a call
// holds a query when it holds each of its words (and each run of 3+ characters stands whole in
// one of its messages).
import { createHash } from 'node:crypto';
import { messageWords, stepOwnWords } from '../../dist/src/recall/recorded-text.js';
import { queryTerms, termLexemes } from '../../dist/src/recall/tokenize.js';
import { termsToCheck } from '../../dist/src/recall/match.js';
import { wordHash } from '../../dist/src/recall/word-hash.js';

export const CALLS = 19;
export const PER_RUN = CALLS + 1;
export const T0 = 1_700_000_000_000_000_000n;
export const RUN_NS = 60_000_000_000n;
export const STEP_NAME = 'chat gpt-4o';
export const SYSTEM =
  'You are a patient assistant. Keep to what the user said earlier in the conversation and answer fully.';
const VOCABULARY = 1_000_000;
const DRAWS = 15;
const TOPICS = 10_000;
/** Phrases of the recall tests' fixtures, each in about one message in `every`. */
const PHRASES = [
  ["What's the weather in Paris right now?", 211],
  ['weather', 97],
  ['get_weather', 307],
  ['an umbrella for the drizzle', 1009],
  ['umbrella', 997],
  ['drizzle', 2003],
  ['shops', 4001],
  ['reviews', 5003],
  ['a zeppelin over Lyon', 9973],
  ['Lyon', 1013],
  ['a quokka in Lyon', 50021],
  ['picnic', 20011],
  ['read the barometer', 30011],
  ['ignore previous instructions', 7919],
  ['北京小雨', 3001],
  ['上海天气', 6007],
  ['القاهرة الطقس مُشْمِس غدا', 4999],
];
const PHRASE_BOUNDS = (() => {
  let sum = 0;
  return PHRASES.map(([, every]) => (sum += 1 / every));
})();

export const spanEndNs = (r, i) =>
  T0 + BigInt(r) * RUN_NS + (i === 0 ? 30_000_000_000n : BigInt(i) * 1_000_000_000n + 500_000_000n);
export const runFailed = (r) => r % 10 === 3;

/** mulberry32: uniform in [0, 1), 32 bits */
function generator(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const LN_VOCABULARY = Math.log(VOCABULARY);
const digestOf = (body) => createHash('sha256').update(body).digest();

function message(role, content) {
  const body = JSON.stringify({ content, role });
  return { content, body, digest: digestOf(body), words: messageWords(body) };
}

export const systemMessage = message('system', SYSTEM);
/** a model call's own words (its name): its lists' words are its messages' */
export const stepWords = stepOwnWords(
  { name: STEP_NAME, tool: null, request: null, response: null },
  { request: true, response: true },
);

/** The content of run r's message at position p. */
function content(random, r, p) {
  const words = [];
  for (let d = 0; d < DRAWS; d++) words.push(`w${Math.floor(Math.exp(random() * LN_VOCABULARY))}`);
  if (p === 0) words.push(`topic${r % TOPICS}`);
  const u = random();
  const phrase = PHRASE_BOUNDS.findIndex((b) => u < b);
  if (phrase >= 0) words.push(PHRASES[phrase][0]);
  const h = (r * 2 * CALLS + p) % 1000;
  if (h === 6 && p % 2 === 0) words.push('明天北京天气预报');
  if (h === 8 && p % 2 === 0) words.push('北京天气');
  if (h === 9 && p % 2 === 1) words.push('天气预 气预报');
  return words.join(' ');
}

/**
 * Runs first..last-1, in order: each run's messages by position ({content, body, digest,
 * words}). Seeded: the same seed gives the same runs whatever the batches.
 */
export function* conversationRuns(seed, runs) {
  const random = generator(seed);
  for (let r = 0; r < runs; r++) {
    const messages = [];
    for (let p = 0; p < 2 * CALLS; p++)
      messages.push(message(p % 2 === 0 ? 'user' : 'assistant', content(random, r, p)));
    yield messages;
  }
}

/**
 * Tracks what the queries need while the runs are generated (observe each run's messages in
 * order), then answers them as recall must (answer).
 */
export function createOracle(queries, runs) {
  const ABSENT = 127;
  const tracked = new Map(); // hi lane -> [{ lo, first }]
  const lexemeFirst = new Map(); // lexeme -> Int8Array of first positions by run
  const runFirst = new Map(); // run text -> Int8Array
  const track = (lexeme) => {
    if (lexemeFirst.has(lexeme)) return;
    const first = new Int8Array(runs).fill(ABSENT);
    lexemeFirst.set(lexeme, first);
    const [hi, lo] = wordHash(lexeme);
    if (!tracked.has(hi)) tracked.set(hi, []);
    tracked.get(hi).push({ lo, first });
  };
  const plans = queries.map((q) => {
    const terms = queryTerms(q);
    const lexemes = [...new Set(terms.flatMap(termLexemes))];
    for (const l of lexemes) track(l);
    const checked = termsToCheck(terms).map((t) => t.text);
    for (const t of checked) if (!runFirst.has(t)) runFirst.set(t, new Int8Array(runs).fill(ABSENT));
    return { q, lexemes, checked };
  });
  const mark = (lanes, r, p) => {
    for (let j = 0; j < lanes.length; j += 2) {
      const hits = tracked.get(lanes[j]);
      if (hits === undefined) continue;
      for (const h of hits)
        if (h.lo === lanes[j + 1] && (r < 0 || h.first[r] > p)) {
          if (r < 0) h.first.fill(-1);
          else h.first[r] = p;
        }
    }
  };
  // in every call of every run: the system prompt's words and the calls' own words
  mark(systemMessage.words, -1, -1);
  mark(stepWords, -1, -1);
  return {
    observe(r, messages) {
      messages.forEach((m, p) => {
        mark(m.words, r, p);
        for (const [text, first] of runFirst) if (first[r] > p && m.content.includes(text)) first[r] = p;
      });
      for (const [text, first] of runFirst) if (SYSTEM.includes(text)) first[r] = -1;
    },
    /**
     * The answer to q (bounds as recall's defaults): { status, count } for a refused query,
     * else { status, count, truncated, runs: [{ run, outcome, score, last_end_ns, steps }] }
     * ranked, where count is the calls holding every word (before the in-order check).
     */
    answer(q, bounds) {
      const plan = plans.find((p) => p.q === q);
      const firstOf = (arrays, r) => arrays.reduce((m, a) => Math.max(m, a[r]), -1);
      const words = plan.lexemes.map((l) => lexemeFirst.get(l));
      const checks = plan.checked.map((t) => runFirst.get(t));
      let count = 0;
      const matches = []; // newest first: runs descending, calls descending
      for (let r = runs - 1; r >= 0; r--) {
        const wordsFirst = firstOf(words, r);
        if (wordsFirst === ABSENT) continue;
        const fromCall = (first) => Math.max(1, Math.ceil((first + 1) / 2));
        count += CALLS - fromCall(wordsFirst) + 1;
        const all = Math.max(wordsFirst, firstOf(checks, r));
        if (all === ABSENT) continue;
        for (let k = CALLS; k >= fromCall(all); k--) matches.push({ r, k });
      }
      if (count > bounds.maxTotalMatches) return { status: 400, count };
      const newest = matches.slice(0, bounds.maxMatchingSpans);
      const byRun = new Map();
      for (const m of newest) {
        const e = byRun.get(m.r) ?? { r: m.r, score: 0, newest: spanEndNs(m.r, m.k) };
        e.score++;
        byRun.set(m.r, e);
      }
      const grouped = [...byRun.values()].sort(
        (a, b) => b.score - a.score || b.r - a.r || cmp(`run-${a.r}`, `run-${b.r}`),
      );
      const read = grouped.slice(0, bounds.maxRunsRead).map((e) => ({
        run: `run-${e.r}`,
        outcome: runFailed(e.r) ? 'failure' : 'success',
        score: e.score,
        last_end_ns: spanEndNs(e.r, 0).toString(),
        steps: CALLS,
      }));
      read.sort(
        (a, b) =>
          (a.outcome === 'success' ? 0 : 1) - (b.outcome === 'success' ? 0 : 1) ||
          b.score - a.score ||
          cmp(b.last_end_ns.padStart(20, '0'), a.last_end_ns.padStart(20, '0')) ||
          cmp(a.run, b.run),
      );
      return {
        status: 200,
        count,
        truncated: matches.length > bounds.maxMatchingSpans || grouped.length > bounds.maxRunsRead,
        runs: read,
      };
    },
  };
}

const cmp = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
