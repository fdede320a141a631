/**
 * The WebAssembly word table (src/recall/ascii-words.wat) that indexWords uses while a step's
 * texts are ASCII. tokenize-fast-path.test.ts holds indexWords to the plain implementation
 * over every kind of text (and so this table too); here: the committed module is the .wat's,
 * the cap where its order list is full, and words handed over one by one (addUnits).
 */
import { describe, expect, it } from 'vitest';
import { compileAsciiWords } from '../../../scripts/build-wasm.mjs';
import { Added, ASCII_WORDS_MAX, createAsciiWords } from '../../../src/recall/ascii-words.js';
import { ASCII_WORDS_WASM } from '../../../src/recall/ascii-words-wasm.js';
import { indexWords, MAX_STEP_WORDS } from '../../../src/recall/tokenize.js';
import { hashLexemes, indexLexemesReference } from './tokenize-reference.js';

describe('the WebAssembly word table', () => {
  it('is the one ascii-words.wat compiles to (npm run build:wasm after changing it)', async () => {
    expect(ASCII_WORDS_WASM).toBe((await compileAsciiWords()).toString('base64'));
  });

  it('keeps the first MAX_STEP_WORDS words of a step with more, as the plain implementation does', () => {
    expect(ASCII_WORDS_MAX).toBe(MAX_STEP_WORDS);
    const many = Array.from({ length: MAX_STEP_WORDS + 5000 }, (_, i) => `w${i.toString(36)}`);
    const texts = [many.slice(0, 40_000).join(' '), many.slice(40_000).join(', ')];
    for (const maxWords of [MAX_STEP_WORDS - 1, MAX_STEP_WORDS]) {
      expect(indexWords(texts, maxWords)).toEqual(hashLexemes(indexLexemesReference(texts, maxWords)));
    }
    // and the table is as good as new for the next step
    expect(indexWords(['Fresh start fresh'])).toEqual(hashLexemes(['fresh', 'start']));
  });

  it('makes room for the bytes it reads past a text ending just short of its memory', () => {
    // the module reads up to 128 bytes past the text (ascii-words.ts TEXT_PADDING): texts whose
    // end falls in the last 128 bytes of a fresh instance's room must make it grow, not trap
    const room = 74 * 64 * 1024 - 0x481000;
    for (const n of [room - 129, room - 128, room - 127, room - 64, room - 1, room, room + 1]) {
      const text = `${'ab cd '.repeat(Math.ceil(n / 6)).slice(0, n - 5)} wxyz`;
      expect(text.length).toBe(n);
      const ascii = createAsciiWords()!;
      ascii.reset();
      expect(ascii.add(text, 10)).toBe(Added.Done);
      expect(ascii.lanes(10)).toEqual(hashLexemes(indexLexemesReference([text], 10)));
      expect(ascii.lanes(10).length).toBeGreaterThanOrEqual(6); // ab, cd, wxyz at least
    }
  });

  it('adds nothing of a text that is not ASCII; words found elsewhere join the same table, once each', () => {
    const ascii = createAsciiWords()!;
    expect(ascii).not.toBeNull();
    ascii.reset();
    expect(ascii.add('One two three two', 10)).toBe(Added.Done);
    expect(ascii.add('four café', 10)).toBe(Added.NotAscii);
    expect(ascii.size).toBe(3);
    // short ASCII words keyed by their bytes, longer and non-ASCII ones by their lanes, as scan keys them
    const found = 'two café temperatures four';
    for (const [start, end] of [
      [0, 3],
      [4, 8],
      [9, 21],
      [22, 26],
      [9, 21],
      [4, 8],
    ]) {
      expect(ascii.addUnits(found, start, end, 10)).toBe(false);
    }
    expect(ascii.lanes(10)).toEqual(hashLexemes(['one', 'two', 'three', 'café', 'temperatures', 'four']));
    expect(ascii.add('temperatures four five six', 10)).toBe(Added.Done);
    expect(ascii.lanes(10)).toEqual(
      hashLexemes(['one', 'two', 'three', 'café', 'temperatures', 'four', 'five', 'six']),
    );
    expect(ascii.addUnits('seven', 0, 5, 9)).toBe(true); // the ninth of nine: full
    expect(ascii.lanes(9)).toEqual(
      hashLexemes(['one', 'two', 'three', 'café', 'temperatures', 'four', 'five', 'six', 'seven']),
    );
  });
});
