/**
 * @module recall/ascii-words
 * The WebAssembly word table (ascii-words.wat) that holds a step's words: tokenize.ts
 * indexWords hands each ASCII text (or long ASCII stretch of a mostly-ASCII text) over to be
 * read here, and the words it finds in the rest of such a text one by one (addUnits); it
 * moves what the table holds into a WordTable when a text is mostly not ASCII. Same words,
 * same order, same cap as the JavaScript path (test/unit/recall/ascii-words.test.ts and
 * tokenize-fast-path.test.ts hold them equal), several times faster on long ASCII text
 * (docs/benchmarks.md).
 */
import { ASCII_WORDS_WASM } from './ascii-words-wasm.js';
import { fmix32, unmixedLanes, type WordTable } from './word-hash.js';
import { compileWasm, instantiateWasm } from '../wasm-module.js';

/** Words the module's order list has room for: a larger cap takes the JavaScript path. */
export const ASCII_WORDS_MAX = 65_536;

const ORDER_OFFSET = 0x400000;
/** where a short word handed over by itself is written (ascii-words.wat `short`) */
const SHORT_OFFSET = 0x480000;
const INPUT_OFFSET = 0x481000;
const PAGE = 64 * 1024;
/** bytes after the text that the module zeroes and reads (ascii-words.wat $lower) */
const TEXT_PADDING = 128;

interface Exports {
  memory: { buffer: ArrayBuffer; grow(pages: number): number };
  count: { value: number };
  reset(): void;
  scan(from: number, n: number, maxWords: number): number;
  short(at: number, len: number, maxWords: number): number;
  hashed(hi: number, lo: number, maxWords: number): number;
}

/** What adding a text did. */
export const Added = {
  /** its words are in */
  Done: 0,
  /** maxWords words are there: stop */
  Full: 1,
  /** it is not all ASCII: nothing of it was added */
  NotAscii: 2,
} as const;
export type Added = (typeof Added)[keyof typeof Added];

const encoder = new TextEncoder();
/** Up to this length (most strings of a step), a JS loop is quicker than a call to encodeInto. */
const SHORT_TEXT = 32;

/**
 * Writes text's characters as bytes into `into` from `at` (room for text.length bytes) when
 * it is all ASCII; false (and some bytes written) when not. Any other character takes two
 * UTF-8 bytes or more, so one byte per character read means ASCII.
 */
export function copyAscii(text: string, into: Uint8Array, at: number): boolean {
  const n = text.length;
  if (n <= SHORT_TEXT) {
    for (let k = 0; k < n; k++) {
      const c = text.charCodeAt(k);
      if (c > 0x7f) return false;
      into[at + k] = c;
    }
    return true;
  }
  const { read, written } = encoder.encodeInto(text, into.subarray(at, at + n));
  return read === n && written === n;
}

export class AsciiWords {
  private bytes: Uint8Array;

  constructor(private readonly wasm: Exports) {
    this.bytes = new Uint8Array(wasm.memory.buffer);
  }

  /** Starts a step: no words. */
  reset(): void {
    this.wasm.reset();
  }

  /** the module's memory: tables, and room for the longest text it was given */
  get memoryBytes(): number {
    return this.bytes.length;
  }

  get size(): number {
    return this.wasm.count.value;
  }

  add(text: string, maxWords: number): Added {
    const n = text.length;
    const needed = INPUT_OFFSET + n + TEXT_PADDING;
    if (needed > this.bytes.length) this.grow(needed);
    if (!copyAscii(text, this.bytes, INPUT_OFFSET)) return Added.NotAscii;
    return this.wasm.scan(INPUT_OFFSET, n, maxWords) === 0 ? Added.Full : Added.Done;
  }

  /** The first `count` words, in order, finished (fmix32): WordTable.lanes. */
  lanes(count: number): Int32Array {
    const out = new Int32Array(this.bytes.buffer, ORDER_OFFSET, Math.min(count, this.size) * 2).slice();
    for (let i = 0; i < out.length; i++) out[i] = fmix32(out[i]);
    return out;
  }

  /** Adds the words held here, in order, to an unmixed WordTable (which takes the step from here). */
  moveTo(words: WordTable): void {
    const lanes = new Int32Array(this.bytes.buffer, ORDER_OFFSET, this.size * 2);
    for (let i = 0; i < lanes.length; i += 2) words.add(lanes[i], lanes[i + 1]);
  }

  /**
   * Adds one word found in a text that is not all ASCII (tokenize.ts): the lexeme whose units
   * are s[start, end), lower case already. A word of up to 8 ASCII units is keyed by its bytes,
   * as scan keys it; any other by its lanes. Returns true once maxWords words are there.
   */
  addUnits(s: string, start: number, end: number, maxWords: number): boolean {
    const n = end - start;
    if (n <= 8) {
      let k = 0;
      for (; k < n; k++) {
        const c = s.charCodeAt(start + k);
        if (c > 0x7f) break;
        this.bytes[SHORT_OFFSET + k] = c;
      }
      if (k === n) return this.wasm.short(SHORT_OFFSET, n, maxWords) !== 0;
    }
    const lanes = unmixedLanes(s, start, end);
    return this.wasm.hashed(lanes[0], lanes[1], maxWords) !== 0;
  }

  /** Room for `needed` bytes of memory. */
  private grow(needed: number): void {
    const pages = Math.ceil((needed - this.bytes.length) / PAGE);
    this.wasm.memory.grow(pages);
    this.bytes = new Uint8Array(this.wasm.memory.buffer);
  }
}

let module: object | null | undefined;

/** A new instance (each holds one step's words at a time); null where WebAssembly (with SIMD) is unavailable. */
export function createAsciiWords(): AsciiWords | null {
  // where it does not compile, tokenize.ts's JavaScript path does the same
  if (module === undefined) module = compileWasm(ASCII_WORDS_WASM);
  if (!module) return null;
  return new AsciiWords(instantiateWasm<Exports>(module));
}
