/**
 * Recall's index rows by trace (src/recall/trace-words.ts): the steps of a trace written
 * together, the union of their words, and for each word the steps holding it.
 */
import { describe, expect, it } from 'vitest';
import { MAX_ROW_STEPS, TraceWords } from '../../../src/recall/trace-words.js';
import { hashLexemes } from './tokenize-reference.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const spanId = (n: number) => n.toString(16).padStart(16, '0');
const step = (traceId: string, n: number, lexemes?: string[]) => ({ traceId, spanId: spanId(n), words: lexemes && hashLexemes(lexemes) });

/** A row as [tenant, trace, words (lexemes among `known`), masks (as bit strings), span ids, steps]. */
function rowsOf(words: TraceWords, known: string[]) {
  const names = new Map<string, string>();
  known.forEach((l) => { const [hi, lo] = hashLexemes([l]); names.set(`${hi}/${lo}`, l); });
  return words.rows('t1').map(([tenant, trace, lanes, masks, spans, steps]) => {
    const w = lanes as Int32Array;
    const m = masks as Int32Array;
    return [
      tenant,
      Buffer.from(trace as Uint8Array).toString('hex'),
      Array.from({ length: w.length / 2 }, (_, i) => names.get(`${w[2 * i]}/${w[2 * i + 1]}`)),
      Array.from({ length: m.length / 2 }, (_, i) => ((BigInt(m[2 * i] >>> 0) << 32n) | BigInt(m[2 * i + 1] >>> 0)).toString(2)),
      Buffer.from(spans as Uint8Array).toString('hex'),
      steps,
    ];
  });
}

describe('TraceWords', () => {
  it('keeps one row per trace: the union of its steps\' words in first-use order, which steps hold each, and the steps', () => {
    const words = TraceWords.of([
      step(A, 1, ['weather', 'paris']),
      null,
      step(B, 2, ['lyon']),
      step(A, 3, ['paris', 'drizzle']),
      step(A, 4, []),
      step(B, 5),
    ]);
    expect(words.size).toBe(2);
    expect(rowsOf(words, ['weather', 'paris', 'drizzle', 'lyon'])).toEqual([
      ['t1', A, ['weather', 'paris', 'drizzle'], ['1', '11', '10'], spanId(1) + spanId(3), 2],
      ['t1', B, ['lyon'], ['1'], spanId(2), 1],
    ]);
  });

  it('writes nothing for steps without words', () => {
    expect(TraceWords.of([step(A, 1, []), step(B, 2)]).size).toBe(0);
  });

  it('sets bits past 32 in the high half, and starts another row after 64 steps', () => {
    const words = new TraceWords();
    for (let n = 0; n < MAX_ROW_STEPS + 1; n++) words.add(step(A, n, n === 40 ? ['rare', 'common'] : ['common']));
    const rows = rowsOf(words, ['common', 'rare']);
    expect(rows.map((r) => r[5])).toEqual([64, 1]);
    expect(rows[0][2]).toEqual(['common', 'rare']);
    expect(rows[0][3]).toEqual(['1'.repeat(64), `1${'0'.repeat(40)}`]);
    expect(rows[1][2]).toEqual(['common']);
    expect(rows[1][4]).toBe(spanId(64));
  });
});
