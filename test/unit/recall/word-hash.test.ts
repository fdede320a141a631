/**
 * WordTable.ascending (src/recall/word-hash.ts): a table's words in the order PostgreSQL's
 * bigint sorts them, each with the number add() gave it, as recall's index rows are written.
 */
import { describe, expect, it } from 'vitest';
import { ascendingWords, indexOfWord, WordTable } from '../../../src/recall/word-hash.js';

const bigintOf = (hi: number, lo: number) => BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo >>> 0));
const byValue = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

function ascendingOf(table: WordTable): { words: bigint[]; numbers: number[] } {
  const { lanes, numbers } = table.ascending();
  return {
    words: Array.from({ length: numbers.length }, (_, i) => bigintOf(lanes[2 * i], lanes[2 * i + 1])),
    numbers: Array.from(numbers),
  };
}

describe('WordTable.ascending', () => {
  it('orders words sharing a high half by their low half, unsigned, as the bigint does', () => {
    const table = new WordTable();
    const added: [number, number][] = [
      [5, -1],
      [5, 3],
      [-7, 0],
      [5, 0x7fffffff],
      [-7, -2147483648],
      [0, 0],
      [5, 0],
    ];
    added.forEach(([hi, lo]) => table.add(hi, lo));
    const { words, numbers } = ascendingOf(table);
    expect(words).toEqual(added.map(([hi, lo]) => bigintOf(hi, lo)).sort(byValue));
    // each word keeps its number: the n-th added is the n-th of `added`
    expect(numbers.map((n) => bigintOf(...added[n]))).toEqual(words);
  });

  it('sorts thousands of words, negative and positive, with their numbers', () => {
    const table = new WordTable();
    let seed = 12345;
    const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) | 0);
    const added: [number, number][] = [];
    for (let i = 0; i < 5000; i++) {
      // a few high halves shared by many words, so runs of equal hi are long
      const hi = i % 3 === 0 ? next() % 4 : next();
      const lo = next();
      if (table.add(hi, lo) < 0) added.push([hi, lo]);
    }
    const { words, numbers } = ascendingOf(table);
    expect(words).toEqual(added.map(([hi, lo]) => bigintOf(hi, lo)).sort(byValue));
    expect(numbers.map((n) => bigintOf(...added[n]))).toEqual(words);
  });

  it('is empty for an empty table', () => {
    expect(ascendingOf(new WordTable())).toEqual({ words: [], numbers: [] });
  });
});

describe('indexOfWord', () => {
  it('finds each word of a sorted list at its place, and no word that is not there', () => {
    const words: number[] = [];
    for (let i = 0; i < 1000; i++) words.push(((i * 7919) % 1000) - 500, (i * 2654435761) | 0);
    const { lanes } = ascendingWords(Int32Array.from(words), 1000);
    for (let i = 0; i < 1000; i++) expect(indexOfWord(lanes, lanes[2 * i], lanes[2 * i + 1])).toBe(i);
    expect(indexOfWord(lanes, 501, 0)).toBe(-1);
    expect(indexOfWord(lanes, lanes[0], lanes[1] + 1)).toBe(-1);
    expect(indexOfWord(new Int32Array(0), 1, 1)).toBe(-1);
  });
});
