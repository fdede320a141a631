/**
 * Recall's index rows by trace (src/recall/trace-words.ts): one row per trace holding the
 * union of its steps' words, split where a row would pass the byte cap.
 */
import { describe, expect, it } from 'vitest';
import { TraceWords } from '../../../src/recall/trace-words.js';

const A = 'a'.repeat(32);
const B = 'b'.repeat(32);
const rowsOf = (words: TraceWords) =>
  words.rows('t1').map(([tenant, trace, lexemes, steps]) => [tenant, Buffer.from(trace as Uint8Array).toString('hex'), lexemes, steps]);

describe('TraceWords', () => {
  it('keeps one row per trace with the union of its steps\' words, in first-use order, and their number', () => {
    const words = TraceWords.of([
      { traceId: A, search: ['weather', 'paris'] },
      null,
      { traceId: B, search: ['lyon'] },
      { traceId: A, search: ['paris', 'drizzle'] },
      { traceId: A, search: [] },
      { traceId: B },
    ]);
    expect(words.size).toBe(2);
    expect(rowsOf(words)).toEqual([
      ['t1', A, ['weather', 'paris', 'drizzle'], 2],
      ['t1', B, ['lyon'], 1],
    ]);
  });

  it('writes nothing for steps without words', () => {
    expect(TraceWords.of([{ traceId: A, search: [] }, { traceId: B }]).size).toBe(0);
  });

  it('starts another row of the trace where one would pass the cap (3 bytes per UTF-16 unit + 4 per lexeme)', () => {
    const words = new TraceWords(30);
    words.add({ traceId: A, search: ['abcd', 'éé'] }); // 16 + 10
    words.add({ traceId: A, search: ['éé', 'xyz'] }); // already there; 13 more would make 39
    words.add({ traceId: A, search: ['q'] });
    expect(rowsOf(words)).toEqual([
      ['t1', A, ['abcd', 'éé'], 2], // the second step's words are in both rows: it counts in both
      ['t1', A, ['xyz', 'q'], 2],
    ]);
  });
});
