/**
 * @module recall/word-hash
 * Recall stores a word as a 64-bit hash of it (a bigint in PostgreSQL), not as text: hashes
 * need no sorting by collation, no escaping and no length prefix, a GIN index on bigint[]
 * compares integers, and the tokenizer can compute a word's hash while it reads the word,
 * without building a string for it. The price is the chance that two different words share a
 * hash and so find each other: with 64 bits, about 1 in 10^19 for any given pair of words.
 *
 * The hash of a lexeme is two 32-bit lanes over its UTF-16 code units u (the same from a
 * string and from the bytes of an all-ASCII text, whose units are its bytes):
 *   hi = FNV-1a (offset 0x811c9dc5, prime 0x01000193), then murmur3's fmix32;
 *   lo = the same loop with offset 0x9747b28c and prime 0x5bd1e995, then fmix32;
 * and the stored value is the signed 64-bit integer hi·2^32 + lo. It is part of the stored
 * format: changing it needs a migration and `tapedeck reindex`.
 */

export const HI_OFFSET = 0x811c9dc5 | 0;
export const HI_PRIME = 0x01000193;
export const LO_OFFSET = 0x9747b28c | 0;
export const LO_PRIME = 0x5bd1e995;

/** murmur3's finalizer: every input bit reaches every output bit. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

/** The lanes hashUnits computed last: a scratch pair, so hashing a word allocates nothing. */
const lastLanes = new Int32Array(2);

/** The two FNV lanes of the units s[start, end) into lastLanes, before fmix32. */
function hashUnits(s: string, start: number, end: number): void {
  let hi = HI_OFFSET;
  let lo = LO_OFFSET;
  for (let k = start; k < end; k++) {
    const u = s.charCodeAt(k);
    hi = Math.imul(hi ^ u, HI_PRIME);
    lo = Math.imul(lo ^ u, LO_PRIME);
  }
  lastLanes[0] = hi;
  lastLanes[1] = lo;
}

/**
 * The two FNV lanes of the units s[start, end), before fmix32 (what an unmixed table and the
 * WebAssembly table take): a scratch pair that the next call overwrites.
 */
export function unmixedLanes(s: string, start: number, end: number): Int32Array {
  hashUnits(s, start, end);
  return lastLanes;
}

/** The two lanes of a lexeme's hash (its units s[start, end)). */
export function wordHash(s: string, start = 0, end = s.length): [hi: number, lo: number] {
  hashUnits(s, start, end);
  return [fmix32(lastLanes[0]), fmix32(lastLanes[1])];
}

/** A hash as PostgreSQL's bigint, in decimal (query parameters, the INSERT path). */
export function wordId(hi: number, lo: number): string {
  return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo >>> 0)).toString();
}

/** The decimal bigint of each hash in a list of lanes (hi, lo, hi, lo, ...). */
export function wordIds(lanes: Int32Array): string[] {
  const out = new Array<string>(lanes.length >> 1);
  for (let i = 0; i < out.length; i++) out[i] = wordId(lanes[2 * i], lanes[2 * i + 1]);
  return out;
}

/**
 * The lanes (hi, lo, ...) with their words in ascending order of the stored bigint. A GIN
 * index sorts an array's elements before it writes their entries, and PostgreSQL's sort
 * returns at once on sorted input: the words index then takes about 40 % less CPU per
 * message (docs/benchmarks.md). Every new message's words are sorted at ingest, and V8's
 * typed-array sort takes several times as long as this for a message's few hundred words:
 * the hashes are uniform, so their high bits place each word in a bucket of about one, and
 * an insertion pass orders the few that share one.
 */
export function inInt8Order(lanes: Int32Array): Int32Array {
  const n = lanes.length >> 1;
  const out = new Int32Array(n * 2);
  // about one bucket a word, by the high bits of hi in signed order (its sign bit flipped)
  const bits = Math.min(16, Math.max(1, 32 - Math.clz32(n)));
  const shift = 32 - bits;
  const starts = new Uint32Array((1 << bits) + 1);
  for (let i = 0; i < n; i++) starts[((lanes[2 * i] ^ SIGN) >>> shift) + 1]++;
  for (let b = 1; b < starts.length; b++) starts[b] += starts[b - 1];
  for (let i = 0; i < n; i++) {
    const hi = lanes[2 * i];
    const at = starts[(hi ^ SIGN) >>> shift]++;
    out[2 * at] = hi;
    out[2 * at + 1] = lanes[2 * i + 1];
  }
  for (let i = 1; i < n; i++) {
    const hi = out[2 * i];
    const lo = out[2 * i + 1];
    let j = i;
    while (j > 0 && (out[2 * j - 2] > hi || (out[2 * j - 2] === hi && out[2 * j - 1] >>> 0 > lo >>> 0))) {
      out[2 * j] = out[2 * j - 2];
      out[2 * j + 1] = out[2 * j - 1];
      j--;
    }
    out[2 * j] = hi;
    out[2 * j + 1] = lo;
  }
  return out;
}

const SIGN = 0x80000000;

const INITIAL_SLOTS = 256;
const INITIAL_SHIFT = 32 - 8;

/**
 * Distinct word hashes, each numbered in the order first added. Open addressing on typed
 * arrays, at most half full, so adding a word allocates nothing: a Map would need a key
 * object or string per word. `lanes` holds the words in order (hi, lo, hi, lo, ...).
 *
 * A table made with `unmixed` takes the lanes before fmix32 (the tokenizer's) and applies it
 * once per distinct word when handing them over, instead of twice per word read: fmix32 is
 * a bijection, so the raw lanes are as distinct as the finished ones. Slots are chosen by
 * the high bits of a multiplicative hash (Fibonacci hashing), which spreads raw FNV lanes as
 * well as finished ones.
 */
export class WordTable {
  /** per slot: hi, lo, and the word's number + 1 (0: free) */
  private slots = new Int32Array(INITIAL_SLOTS * 3);
  private mask = INITIAL_SLOTS - 1;
  private shift = INITIAL_SHIFT;
  private lanesOf = new Int32Array(INITIAL_SLOTS);
  size = 0;

  constructor(private readonly unmixed = false) {}

  /** The word's number if it is there, else ~ the number it now has. */
  add(hi: number, lo: number): number {
    const slots = this.slots;
    const mask = this.mask;
    let slot = Math.imul(hi ^ lo, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const at = slot * 3;
      const n = slots[at + 2];
      if (n === 0) break;
      if (slots[at] === hi && slots[at + 1] === lo) return n - 1;
      slot = (slot + 1) & mask;
    }
    const number = this.size++;
    slots[slot * 3] = hi;
    slots[slot * 3 + 1] = lo;
    slots[slot * 3 + 2] = number + 1;
    if (number * 2 >= this.lanesOf.length) {
      const grown = new Int32Array(this.lanesOf.length * 2);
      grown.set(this.lanesOf);
      this.lanesOf = grown;
    }
    this.lanesOf[number * 2] = hi;
    this.lanesOf[number * 2 + 1] = lo;
    if (this.size * 2 > mask) this.grow();
    return ~number;
  }

  /** Whether the word is there (nothing added). */
  has(hi: number, lo: number): boolean {
    const slots = this.slots;
    let slot = Math.imul(hi ^ lo, 0x9e3779b1) >>> this.shift;
    for (;;) {
      const at = slot * 3;
      if (slots[at + 2] === 0) return false;
      if (slots[at] === hi && slots[at + 1] === lo) return true;
      slot = (slot + 1) & this.mask;
    }
  }

  /** add() for the lexeme whose units are s[start, end), hashed without allocating (an unmixed table). */
  addUnits(s: string, start: number, end: number): number {
    hashUnits(s, start, end);
    return this.add(lastLanes[0], lastLanes[1]);
  }

  /** The first `count` words (all by default), in order, finished: a copy the table no longer touches. */
  lanes(count = this.size): Int32Array {
    const out = this.lanesOf.slice(0, Math.min(count, this.size) * 2);
    if (this.unmixed) for (let i = 0; i < out.length; i++) out[i] = fmix32(out[i]);
    return out;
  }

  /** Empties the table; a large one is dropped rather than kept for the next use. */
  clear(): void {
    if (this.slots.length > 4096 * 3) {
      this.slots = new Int32Array(INITIAL_SLOTS * 3);
      this.mask = INITIAL_SLOTS - 1;
      this.shift = INITIAL_SHIFT;
      this.lanesOf = new Int32Array(INITIAL_SLOTS);
    } else if (this.size > 0) this.slots.fill(0);
    this.size = 0;
  }

  private grow(): void {
    const old = this.slots;
    const slots = new Int32Array(old.length * 2);
    const mask = this.mask * 2 + 1;
    const shift = this.shift - 1;
    for (let at = 0; at < old.length; at += 3) {
      if (old[at + 2] === 0) continue;
      let slot = Math.imul(old[at] ^ old[at + 1], 0x9e3779b1) >>> shift;
      while (slots[slot * 3 + 2] !== 0) slot = (slot + 1) & mask;
      slots[slot * 3] = old[at];
      slots[slot * 3 + 1] = old[at + 1];
      slots[slot * 3 + 2] = old[at + 2];
    }
    this.slots = slots;
    this.mask = mask;
    this.shift = shift;
  }
}
