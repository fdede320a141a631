/**
 * indexWords reads an all-ASCII string on a fast path (its bytes, in WebAssembly: ascii-words.wat)
 * instead of normalizeText and the Unicode scanner, and the ASCII stretches of any other string
 * the same way. Its output must be the
 * hashes of what indexLexemesReference, the plain implementation, finds, for every input: the
 * same words in the same order, the same stop at the cap, the same MAX_TOKEN_CHARS rule. Compared here over
 * seeded random text (ASCII and not, long tokens, several strings per step), every string of the
 * corpus captures, and small caps that stop the index part-way.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { prng } from '../../helpers/prng.js';
import { indexWords, MAX_STEP_WORDS, MAX_TOKEN_CHARS } from '../../../src/recall/tokenize.js';
import { hashLexemes, indexLexemesReference } from './tokenize-reference.js';

const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'fixtures', 'corpus');
/** 0: no word; 1: the first; then a few words, a few dozen, no cap to speak of */
const CAPS = [0, 1, 5, 50, MAX_STEP_WORDS];

const LETTERS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const PUNCTUATION = [
  ' ',
  ' ',
  ' ',
  '. ',
  ', ',
  '_',
  '-',
  "'",
  '"',
  '\n',
  '\t',
  '<',
  '>',
  '{"a":',
  '}',
  ':',
  '/',
  '\\',
  '\u0000',
  '\u007f',
];
/** folds, marks, scripts and code points the general path treats specially */
const NON_ASCII = [
  'é',
  'É',
  'e\u0301',
  'E\u0301\u0302',
  'İ',
  'İstanbul',
  'ı',
  'ς',
  'Σ',
  'ΟΔΟΣ',
  'ΟΔΟΣ.',
  'οδός',
  'ＰＡＲＩＳ',
  'ｗｏｒｄ１２',
  'ﬁle',
  '\u212a',
  'ß',
  'ẞ',
  'ǅ',
  'مَرْحَبًا',
  'بالعالم',
  'ـ',
  'Погода',
  'नमस्ते',
  '今天天气很好',
  '天气',
  '模型',
  'カタカナ',
  'ｶﾀｶﾅ',
  '서울의',
  'ข้าว',
  'ສະບາຍດີ',
  '😀',
  '👍🏽',
  '𠀀𠀁',
  '\ud800',
  '\udfff',
  '\u0301',
  '\u0301'.repeat(120),
  '<\u0338',
  `天气${'\u0301'.repeat(MAX_TOKEN_CHARS)}好`,
  `ข${'\u0e49'.repeat(MAX_TOKEN_CHARS - 1)}าว`,
  '\u00a0',
  '…',
  '—',
  '’',
  '°',
  '\u200b',
  '\ufeff',
  '①',
  '½',
  '²',
];

function pick<T>(rand: () => number, items: readonly T[]): T {
  return items[Math.floor(rand() * items.length)];
}

function word(rand: () => number, length: number, alphabet = LETTERS): string {
  let w = '';
  for (let i = 0; i < length; i++) w += alphabet[Math.floor(rand() * alphabet.length)];
  return w;
}

/** A small vocabulary, so that words repeat within and across strings. */
function vocabulary(rand: () => number): string[] {
  return Array.from({ length: 40 }, () => word(rand, 1 + Math.floor(rand() * 8)));
}

/** A string of words, punctuation, long tokens and, when nonAscii, other scripts. */
function randomText(rand: () => number, vocab: string[], nonAscii: boolean): string {
  const pieces = Math.floor(rand() * 40);
  let s = '';
  for (let i = 0; i < pieces; i++) {
    const r = rand();
    if (r < 0.45) {
      const w = pick(rand, vocab);
      s += rand() < 0.2 ? w.toUpperCase() : rand() < 0.2 ? w[0].toUpperCase() + w.slice(1) : w;
    } else if (r < 0.75) s += pick(rand, PUNCTUATION);
    else if (r < 0.8)
      s += word(rand, MAX_TOKEN_CHARS - 2 + Math.floor(rand() * 5)); // around the limit
    else if (r < 0.82) s += word(rand, 150 + Math.floor(rand() * 300));
    else if (nonAscii) s += pick(rand, NON_ASCII);
    else s += String(Math.floor(rand() * 1e6));
  }
  return s;
}

/** Runs both implementations over every case and cap; returns the cases where they differ. */
function differences(
  cases: string[][],
  caps = CAPS,
): { texts: string[]; maxWords: number; fast: number[]; reference: string[] }[] {
  const out = [];
  for (const texts of cases) {
    for (const maxWords of caps) {
      const fast = [...indexWords(texts, maxWords)];
      const reference = indexLexemesReference(texts, maxWords);
      if (JSON.stringify(fast) !== JSON.stringify([...hashLexemes(reference)]))
        out.push({ texts, maxWords, fast, reference });
    }
  }
  return out.slice(0, 3);
}

/** Every string value inside a JSON value, depth first. */
function strings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (Array.isArray(value)) for (const v of value) strings(v, out);
  else if (value !== null && typeof value === 'object') for (const v of Object.values(value)) strings(v, out);
  return out;
}

function corpusFiles(): string[] {
  return readdirSync(CORPUS, { recursive: true, encoding: 'utf8' })
    .filter((f) => path.basename(f) === 'decoded.json')
    .sort()
    .map((f) => path.join(CORPUS, f));
}

describe('indexWords: the ASCII fast path gives what the plain implementation gives', () => {
  it('for every ASCII character, alone, inside a word and between words, in either case', () => {
    const cases: string[][] = [];
    for (let c = 0; c < 128; c++) {
      const ch = String.fromCharCode(c);
      cases.push([ch], [`ab${ch}cd ${ch}AB${ch}`], [`X${ch.repeat(40)}y`]);
    }
    expect(differences(cases)).toEqual([]);
  });

  it('for seeded random steps of one to four strings, ASCII and not', () => {
    const rand = prng(20240611);
    const cases: string[][] = [];
    for (let i = 0; i < 1500; i++) {
      const vocab = vocabulary(rand);
      const count = 1 + Math.floor(rand() * 4);
      // half the steps all ASCII (the fast path only), half mixing strings of both kinds
      const mixed = rand() < 0.5;
      cases.push(Array.from({ length: count }, () => randomText(rand, vocab, mixed && rand() < 0.6)));
    }
    expect(differences(cases)).toEqual([]);
  });

  it('for words at and around MAX_TOKEN_CHARS, and text shorter and longer than its buffers', () => {
    const rand = prng(7);
    const cases: string[][] = [];
    for (let n = MAX_TOKEN_CHARS - 3; n <= MAX_TOKEN_CHARS + 3; n++) {
      cases.push([`${'a'.repeat(n)} b`], [`${'Ab'.repeat(n).slice(0, n)}.${'9'.repeat(n)}`], [`é ${'x'.repeat(n)}`]);
      cases.push([`今天${'\u0301'.repeat(n - 1)}天气`]); // a character and its marks: n units
    }
    for (const n of [31, 32, 33, 64 * 1024 - 1, 64 * 1024, 64 * 1024 + 1, 200_000]) {
      const vocab = vocabulary(rand);
      let ascii = '';
      while (ascii.length < n) ascii += `${pick(rand, vocab)}${pick(rand, [' ', ', ', '. '])}`;
      cases.push([ascii.slice(0, n)], [`${ascii.slice(0, n - 1)}é`], [ascii.slice(0, n), '天气', ascii.slice(0, 50)]);
    }
    expect(differences(cases, [0, 1, 5, 50, 500, 5000, MAX_STEP_WORDS])).toEqual([]);
  });

  it('for words of every length at every place around the 64-byte chunks the WebAssembly scan reads', () => {
    // ascii-words.wat finds words from masks of 64 bytes and keys the words of up to 8 bytes
    // by their bytes, longer ones by their hash: a word may end at, cross or run past a chunk
    // boundary (or two), be 8 or 9 bytes, or share its first 8 bytes with a longer word.
    const cases: string[][] = [];
    const offsets = [
      0,
      1,
      7,
      8,
      9,
      15,
      16,
      17,
      ...Array.from({ length: 24 }, (_, i) => 50 + i),
      119,
      120,
      127,
      128,
      129,
    ];
    for (let length = 1; length <= MAX_TOKEN_CHARS + 40; length++) {
      const w = Array.from({ length }, (_, i) => 'aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789'[(i * 7 + length) % 36]).join(
        '',
      );
      for (const at of offsets) {
        const pad = '-'.repeat(at);
        cases.push(
          [`${pad}${w}`, `${w.toUpperCase()} ${w.slice(0, 8)} ${w}x ${w}`],
          [`${pad}${w} ${pad}${w.toLowerCase()}.${'z'.repeat(length)}`],
        );
      }
    }
    expect(differences(cases, [MAX_STEP_WORDS])).toEqual([]);
    expect(differences(cases.slice(0, 400), [1, 3])).toEqual([]);
  });

  it('for mostly-ASCII text with other characters here and there, whatever stands on either side', () => {
    // A text that is not all ASCII is cut into stretches read as ASCII and stretches read by
    // the general path (tokenize.ts addMixed): every neighbour of a non-ASCII character, the
    // same words on both sides of a cut (each word once, in first-use order), and cuts near
    // the 64-byte chunks of the WebAssembly scan.
    const around = [
      '',
      ' ',
      'x',
      'X',
      '9',
      '-',
      '.',
      '. ',
      ' x',
      'x ',
      '<',
      '_',
      'temperature',
      'Temperatures ',
      ' the ',
    ];
    const cases: string[][] = [];
    for (const x of NON_ASCII) {
      for (const before of around) {
        for (const after of around) cases.push([`the ${before}${x}${after} the temperature`]);
      }
      cases.push([`${x}`, `${x} the`, `the ${x}`], [`caf${x}s the${x}the ${x}${x} ${x}.${x}`]);
    }
    const rand = prng(99);
    const vocab = vocabulary(rand);
    for (let i = 0; i < 300; i++) {
      let text = '';
      while (text.length < 200 + i * 3) text += `${pick(rand, vocab)}${pick(rand, [' ', ', ', '. ', '-'])}`;
      const at = Math.floor(rand() * text.length);
      const x = pick(rand, NON_ASCII);
      cases.push([`${text.slice(0, at)}${x}${text.slice(at)}`], [text, `${x}${text}`, `${text}${x}`]);
    }
    // two characters that are not ASCII about MIN_ASCII_STRETCH apart (read as one part or two),
    // and a text mostly not ASCII between ASCII ones (the JavaScript table takes the step over)
    for (const gap of [1, 2, 254, 255, 256, 257, 258, 300]) {
      const ascii = `${'ab cd, '.repeat(Math.ceil(gap / 7))}`.slice(0, gap);
      cases.push([`the é${ascii}ü the end`], [`é${ascii}ü`, `${ascii}é ${ascii}ü${ascii}`]);
    }
    const french = 'Le système doit être évalué sur des données réelles, créé à Zürich. '.repeat(40);
    cases.push(['The weather in Paris', french, 'the weather again, “quoted”'], [french.slice(0, 500), 'ok ok']);
    expect(differences(cases)).toEqual([]);
  });

  it('for a step with more distinct words than the reused word table keeps, and the steps after it', () => {
    const many = Array.from({ length: 30_000 }, (_, i) => `W${i.toString(36)}`).join(' ');
    const cases = [[many], ['Hello hello world'], [many, '今天 天气 x'], ['天气好 ok OK'], ['']];
    expect(differences(cases)).toEqual([]);
  });

  it('for words whose hashes collide in one lane (the table must compare both)', () => {
    // Each pair has the same 32-bit FNV-1a, the hash's high lane before mixing, so the same
    // slot in the table: only the low lane tells them apart.
    const pairs = [
      ['safuva', 'ijptej'],
      ['axchku', 'tfhzqm'],
      ['ehvgaz', 'sllead'],
    ];
    const cases = pairs.flatMap(([a, b]) => [[`${a} ${b} ${a.toUpperCase()} ${b}`], [`${a} é ${b}`], [a, `${b} ${a}`]]);
    expect(differences(cases)).toEqual([]);
    expect([...indexWords(['safuva ijptej'])]).toEqual([...hashLexemes(['safuva', 'ijptej'])]);
    expect(hashLexemes(['safuva'])[0]).toBe(hashLexemes(['ijptej'])[0]);
  });

  it('for every string of the corpus captures, one step per capture and one step per string', () => {
    const files = corpusFiles();
    expect(files.length).toBeGreaterThan(0);
    const cases: string[][] = [];
    for (const file of files) {
      const texts = strings(JSON.parse(readFileSync(file, 'utf8')));
      cases.push(texts);
      for (const text of texts) cases.push([text]);
    }
    expect(differences(cases)).toEqual([]);
  });

  it('when the texts are a generator that indexes another step meanwhile', () => {
    function* texts(): Generator<string> {
      yield 'Alpha beta';
      expect(indexWords(['Gamma alpha delta'])).toEqual(hashLexemes(['gamma', 'alpha', 'delta']));
      yield 'beta GAMMA';
    }
    expect(indexWords(texts())).toEqual(hashLexemes(['alpha', 'beta', 'gamma']));
  });
});
