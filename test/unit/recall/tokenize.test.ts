import { describe, expect, it } from 'vitest';
import {
  indexWords,
  MAX_TOKEN_CHARS,
  needsCheck,
  normalizeText,
  queryTerms,
  termLexemes,
  tokenize,
} from '../../../src/recall/tokenize.js';
import { queryWords } from '../../../src/recall/query.js';
import { inInt8Order, wordHash, wordId, wordIds } from '../../../src/recall/word-hash.js';
import { hashLexemes } from './tokenize-reference.js';

/** indexWords' output as the lexemes it hashed, where they are among `candidates` */
const lexemesOf = (lanes: Int32Array, candidates: string[]) => {
  const byId = new Map(candidates.map((c) => [wordId(...wordHash(c)), c]));
  return Array.from({ length: lanes.length / 2 }, (_, i) => byId.get(wordId(lanes[2 * i], lanes[2 * i + 1])) ?? '?');
};

const words = (text: string) => tokenize(text).map((t) => t.text);

describe('tokenize', () => {
  it('splits Latin text into lower-case words on anything that is not a letter, mark or digit', () => {
    expect(words("What's the Weather in PARIS? get_weather(gpt-4o) 12.5°C")).toEqual([
      'what',
      's',
      'the',
      'weather',
      'in',
      'paris',
      'get',
      'weather',
      'gpt',
      '4o',
      '12',
      '5',
      'c',
    ]);
  });

  it('keeps the words of other spaced scripts whole: Arabic, Cyrillic, Greek, Devanagari', () => {
    expect(words('مرحبا بالعالم')).toEqual(['مرحبا', 'بالعالم']);
    expect(words('Погода в Париже')).toEqual(['погода', 'в', 'париже']);
    expect(words('नमस्ते दुनिया')).toEqual(['नमस्ते', 'दुनिया']);
  });

  it('folds full-width forms, ligatures, final sigma and Arabic vowel marks', () => {
    expect(words('ＰＡＲＩＳ ﬁle ΟΔΟΣ οδός İstanbul')).toEqual(['paris', 'file', 'οδοσ', 'οδόσ', 'istanbul']);
    expect(words('مَرْحَبًا')).toEqual(['مرحبا']);
    expect(normalizeText('plain ascii 42')).toBe('plain ascii 42');
  });

  it('makes each character of an unspaced script a token, joined to the one before it', () => {
    expect(tokenize('今天天气，很好 ok')).toEqual([
      { text: '今', seg: true, joined: false },
      { text: '天', seg: true, joined: true },
      { text: '天', seg: true, joined: true },
      { text: '气', seg: true, joined: true },
      { text: '很', seg: true, joined: false },
      { text: '好', seg: true, joined: true },
      { text: 'ok', seg: false, joined: false },
    ]);
    expect(words('GPT模型カタカナ서울의')).toEqual(['gpt', '模', '型', 'カ', 'タ', 'カ', 'ナ', '서', '울', '의']);
    // a Thai consonant keeps its vowel and tone marks
    expect(words('ข้าว')).toEqual(['ข้', 'า', 'ว']);
  });
});

describe('indexWords', () => {
  it('stores each word once, and each character and adjacent pair of an unspaced run', () => {
    expect(indexWords(['Hello hello', '天气好'])).toEqual(hashLexemes(['hello', '天', '气', '天气', '好', '气好']));
  });

  it('does not pair characters across separate strings or punctuation', () => {
    const lanes = indexWords(['天', '气', '很。好']);
    expect(lexemesOf(lanes, ['天', '气', '很', '好', '天气', '很好'])).toEqual(['天', '气', '很', '好']);
  });

  it('leaves out tokens longer than the limit: long words, characters buried in marks', () => {
    expect(indexWords([`${'a'.repeat(MAX_TOKEN_CHARS + 1)} short`])).toEqual(hashLexemes(['short']));
    expect(indexWords([`天气${'\u0301'.repeat(500)}好`])).toEqual(hashLexemes(['天', '好']));
  });

  it('stops at the cap, keeping the words the text uses first', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `w${i}`).join(' ');
    expect(indexWords([text], 100)).toEqual(hashLexemes(Array.from({ length: 100 }, (_, i) => `w${i}`)));
  });
});

describe('wordHash', () => {
  it('is the stored format: these values must never change (a change needs a migration and reindex)', () => {
    // computed apart from this code (Python, from the definition in word-hash.ts)
    expect(wordHash('paris')).toEqual([-2133226563, 2084484893]);
    expect(wordId(...wordHash('paris'))).toBe('-9162138320958998755');
    expect(wordId(...wordHash('天气'))).toBe('-5906829620312254904');
    expect(wordId(0, -1)).toBe('4294967295');
    expect(wordId(-1, -1)).toBe('-1');
    expect(wordId(-2147483648, 0)).toBe('-9223372036854775808');
  });
});

describe('inInt8Order', () => {
  it('orders the words by their signed 64-bit value, each pair kept whole, the input untouched', () => {
    const lanes = indexWords(['weather in Paris, 天气 tomorrow, and the weather after']);
    const ordered = inInt8Order(lanes);
    const values = wordIds(ordered).map(BigInt);
    expect(values).toEqual([...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(new Set(wordIds(ordered))).toEqual(new Set(wordIds(lanes)));
    expect(wordIds(lanes)[0]).toBe(wordId(...wordHash('weather')));
    expect(wordIds(inInt8Order(Int32Array.from([0, 1, -1, -1, -2147483648, 0, 0, -1])))).toEqual([
      '-9223372036854775808',
      '-1',
      '1',
      '4294967295',
    ]);
  });

  it.each([0, 1, 2, 3, 205, 4096, 70_000])('gives the order a 64-bit sort gives, %i words', (n) => {
    let seed = n + 1;
    const random = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) | 0;
      return seed;
    };
    const lanes = new Int32Array(2 * n);
    for (let i = 0; i < lanes.length; i++) lanes[i] = random();
    // some words sharing their high half, or all but the lowest bits of it: one bucket
    for (let i = 2; i + 2 < lanes.length; i += 7) lanes[i] = lanes[i + 2] ^ (i % 3);
    const sorted = new BigInt64Array(n);
    for (let i = 0; i < n; i++) sorted[i] = (BigInt(lanes[2 * i]) << 32n) | BigInt(lanes[2 * i + 1] >>> 0);
    sorted.sort();
    expect(wordIds(inInt8Order(lanes))).toEqual([...sorted].map(String));
  });
});

describe('queryTerms', () => {
  it('makes words and runs of joined characters, each once', () => {
    expect(queryTerms('Weather 天气预报 paris weather 天')).toEqual([
      { kind: 'word', text: 'weather' },
      { kind: 'run', text: '天气预报', units: ['天', '气', '预', '报'] },
      { kind: 'word', text: 'paris' },
      { kind: 'run', text: '天', units: ['天'] },
    ]);
    expect(queryTerms(' ?! ')).toEqual([]);
  });

  it('needs the index for words, characters and pairs, and a check for longer runs', () => {
    const [weather, run, , one] = queryTerms('weather 天气预报 paris 天');
    expect(termLexemes(weather)).toEqual(['weather']);
    expect(termLexemes(one)).toEqual(['天']);
    expect(termLexemes(run)).toEqual(['天气', '气预', '预报']);
    expect([weather, run, one].map(needsCheck)).toEqual([false, true, false]);
    expect(needsCheck(queryTerms('天气')[0])).toBe(false);
  });

  it('asks for the hash of each distinct lexeme of its terms', () => {
    const id = (l: string) => wordId(...wordHash(l));
    expect(queryWords(queryTerms('weather 天气 Paris weather'))).toEqual([id('weather'), id('天气'), id('paris')]);
    expect(queryWords(queryTerms('天气预报'))).toEqual([id('天气'), id('气预'), id('预报')]);
  });
});
