/**
 * Recall's index rows (src/recall/trace-words.ts): steps written together, trace by trace,
 * the union of their words, and for each word the steps holding it.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ROW_STEPS, ROW_WORDS, SORTED_ROW_STEPS, TraceWords } from '../../../src/recall/trace-words.js';
import { MAX_STEP_WORDS } from '../../../src/recall/tokenize.js';
import { hashLexemes } from './tokenize-reference.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const spanId = (n: number) => n.toString(16).padStart(16, '0');
const step = (traceId: string, n: number, lexemes?: string[]) => ({
  traceId,
  spanId: spanId(n),
  words: lexemes ? hashLexemes(lexemes) : new Int32Array(0),
});

/**
 * A row as [tenant, words (lexemes among `known`, else their hashes; by name), their masks (as
 * bit strings, in the same order), trace ids, span ids, steps], after checking that a row of
 * few steps, or of one large step's words, holds its words in ascending order of PostgreSQL's
 * bigint and says so.
 */
function rowsOf(words: TraceWords, known: string[]) {
  const names = new Map<string, string>();
  known.forEach((l) => {
    const [hi, lo] = hashLexemes([l]);
    names.set(`${hi}/${lo}`, l);
  });
  return words.rows('t1').map(([tenant, lanes, masks, traces, spans, steps, sorted]) => {
    const w = lanes as Int32Array;
    const m = masks as Int32Array;
    const bigints = Array.from({ length: w.length / 2 }, (_, i) =>
      BigInt.asIntN(64, (BigInt(w[2 * i]) << 32n) | BigInt(w[2 * i + 1] >>> 0)),
    );
    expect(sorted).toBe((steps as number) <= SORTED_ROW_STEPS || w.length / 2 > ROW_WORDS);
    if (sorted) expect(bigints).toEqual([...bigints].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    const pairs = bigints
      .map((_, i) => [
        names.get(`${w[2 * i]}/${w[2 * i + 1]}`) ?? `${w[2 * i]}/${w[2 * i + 1]}`,
        ((BigInt(m[2 * i] >>> 0) << 32n) | BigInt(m[2 * i + 1] >>> 0)).toString(2),
      ])
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return [
      tenant,
      pairs.map(([name]) => name),
      pairs.map(([, mask]) => mask),
      Buffer.from(traces as Uint8Array).toString('hex'),
      Buffer.from(spans as Uint8Array).toString('hex'),
      steps,
    ];
  });
}

describe('TraceWords', () => {
  it('packs the steps trace by trace into one row: the union of their words, which steps hold each, their ids', () => {
    const words = TraceWords.of([
      step(A, 1, ['weather', 'paris']),
      null,
      step(B, 2, ['lyon', 'paris']),
      step(A, 3, ['paris', 'drizzle']),
      step(A, 4, []),
      step(B, 5),
    ]);
    expect(words.size).toBe(3);
    // A's steps first (its first step came first), then B's: bits 0, 1 are A's, bit 2 is B's
    expect(rowsOf(words, ['weather', 'paris', 'drizzle', 'lyon'])).toEqual([
      [
        't1',
        ['drizzle', 'lyon', 'paris', 'weather'],
        ['10', '100', '111', '1'],
        A + A + B,
        spanId(1) + spanId(3) + spanId(2),
        3,
      ],
    ]);
  });

  it('keeps a row of more than SORTED_ROW_STEPS steps in first-use order, its masks following the steps', () => {
    const words = new TraceWords();
    const n = SORTED_ROW_STEPS + 1;
    for (let i = 0; i < n; i++) words.add(step(A, i, [`own${i}`, 'shared']));
    const [row] = words.rows('t1');
    const known = ['shared', ...Array.from({ length: n }, (_, i) => `own${i}`)];
    expect(row[6]).toBe(false);
    const lanes = row[1] as Int32Array;
    const order = known
      .map((l) => hashLexemes([l]))
      .map(([hi, lo]) =>
        Array.from({ length: lanes.length / 2 }, (_, i) => i).find(
          (i) => lanes[2 * i] === hi && lanes[2 * i + 1] === lo,
        ),
      );
    // own0 first, then shared (the first step's order), then own1, own2, ...
    expect(order).toEqual([1, 0, ...Array.from({ length: n - 1 }, (_, i) => i + 2)]);
  });

  it('writes nothing for steps without words', () => {
    expect(TraceWords.of([step(A, 1, []), step(B, 2)]).size).toBe(0);
  });

  it('sets bits past 32 in the high half, and starts another row after 64 steps, whatever their traces', () => {
    const words = new TraceWords();
    for (let n = 0; n < MAX_ROW_STEPS + 1; n++)
      words.add(step(n < 60 ? A : B, n, n === 40 ? ['rare', 'common'] : ['common']));
    const rows = rowsOf(words, ['common', 'rare']);
    expect(rows.map((r) => r[5])).toEqual([64, 1]);
    expect(rows[0][1]).toEqual(['common', 'rare']);
    expect(rows[0][2]).toEqual(['1'.repeat(64), `1${'0'.repeat(40)}`]);
    expect(rows[0][3]).toBe(A.repeat(60) + B.repeat(4));
    expect(rows[1][1]).toEqual(['common']);
    expect([rows[1][3], rows[1][4]]).toEqual([B, spanId(64)]);
  });

  it("starts another row where a step would pass the row's words, and gives a step of more words a row of its own", () => {
    const many = (from: number, n: number) => Array.from({ length: n }, (_, i) => `w${from + i}`);
    const rows = rowsOf(
      TraceWords.of([
        step(A, 1, many(0, ROW_WORDS - 10)),
        step(A, 2, many(ROW_WORDS - 10, 10)),
        step(A, 3, ['x']), // 1,024 words, then one more
        step(B, 4, many(5000, ROW_WORDS + 1)),
        step(B, 5, ['w5000']),
        step(B, 6, many(0, MAX_STEP_WORDS)),
      ]),
      [],
    );
    // step 5's one word is in step 4's row already: it joins it
    expect(rows.map((r) => [r[4], r[5]])).toEqual([
      [spanId(1) + spanId(2), 2],
      [spanId(3), 1],
      [spanId(4) + spanId(5), 2],
      [spanId(6), 1],
    ]);
    // step 4's row holds its words alone, and step 5 marks the one it holds too
    const masksOf = (row: unknown[], word: string) => {
      const [, names, masks] = row as [string, string[], string[]];
      return masks.filter((_, i) => names[i] === word);
    };
    const big = rowsOf(TraceWords.of([step(B, 4, many(5000, ROW_WORDS + 1)), step(B, 5, ['w5000'])]), [
      'w5000',
      'w5001',
    ])[0];
    expect((big[1] as string[]).length).toBe(ROW_WORDS + 1);
    expect([masksOf(big, 'w5000'), masksOf(big, 'w5001')]).toEqual([['11'], ['1']]);
    expect(new Set(big[2] as string[])).toEqual(new Set(['1', '11']));
  });

  it("counts only a step's words the row does not hold yet against its cap", () => {
    // an agent resends the conversation: ten steps of 600 words, 590 of them shared
    const shared = Array.from({ length: 590 }, (_, i) => `w${i}`);
    const words = TraceWords.of(
      Array.from({ length: 10 }, (_, n) =>
        step(A, n, [...shared, ...Array.from({ length: 10 }, (_, i) => `own${n}-${i}`)]),
      ),
    );
    const rows = rowsOf(words, []);
    expect(rows.map((r) => [(r[1] as unknown[]).length, r[5]])).toEqual([[690, 10]]);
    // past the cap, a step with new words starts another row
    words.add(
      step(
        A,
        10,
        Array.from({ length: 400 }, (_, i) => `late${i}`),
      ),
    );
    const again = rowsOf(words, []);
    expect(again.map((r) => r[5])).toEqual([10, 1]);
    // the second row starts afresh: its words and masks are the late step's alone
    expect([(again[1][1] as string[]).length, new Set(again[1][2] as string[])]).toEqual([400, new Set(['1'])]);
  });
});
