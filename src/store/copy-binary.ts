/**
 * @module store/copy-binary
 * Rows → PostgreSQL's binary COPY format (COPY ... FROM STDIN (FORMAT binary)), written into
 * chunks of about CHUNK_BYTES so a large batch streams to the server instead of sitting in
 * memory as one message. https://www.postgresql.org/docs/15/sql-copy.html ("Binary Format")
 *
 * Each value is sent in its type's binary "recv" form:
 * - text: UTF-8 bytes; bytea: the bytes; bool: one byte, 0 or 1; int4, int8, float8: big-endian;
 * - jsonb: version byte 1, then the JSON text (the server parses it as for the text form);
 * - int8[]: a one-dimensional array without NULLs (ndim 1, no null bitmap, element type 20,
 *   length, lower bound 1), then each element as int32 length 8 and its 8 bytes; an empty
 *   one has no dimensions (ndim 0, no null bitmap, element type 20). The value is
 *   given as an Int32Array of 32-bit halves (high, low, high, low, ...), recall's word hashes,
 *   or as Int8Slots: elements whose values are not known yet (a step's message ids), written
 *   as zeros at offsets the writer records (slotOffsets), to be filled in by fillInt8Slots
 *   before the data is sent;
 * - text[]: a one-dimensional array (ndim 1, a flag saying whether it holds NULLs, element
 *   type 25, length, lower bound 1), then each element as its UTF-8's length and bytes, a
 *   NULL as length -1; given as an array of strings and nulls.
 */
import type { ByteSink } from '../json/json-string.js';
import { utf8Room, writeUtf8 } from '../json/write-utf8.js';

export type CopyType = 'text' | 'bytea' | 'bool' | 'int4' | 'int8' | 'float8' | 'jsonb' | 'int8[]' | 'text[]';

export interface CopyColumn {
  name: string;
  type: CopyType;
}

const CHUNK_BYTES = 256 * 1024;
/** The format's header: signature, flags (no OIDs), header extension length 0. */
export const COPY_HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
/** The format's trailer: a tuple field count of -1. */
export const COPY_TRAILER = Buffer.from([0xff, 0xff]);

/**
 * A text or jsonb value that writes its own UTF-8 into the COPY data (tapes/attribute-json.ts
 * AttributeJson: long JSON with no string built for it). Anywhere else it is a value's
 * String().
 */
export interface Utf8Source {
  writeUtf8(sink: ByteSink): void;
}

/** An int8[] value of `count` elements to be filled in later (see the module comment). */
export class Int8Slots {
  constructor(readonly count: number) {}
}

/**
 * Writes values into the Int8Slots of data a writer produced: the i-th slot (its offset from
 * the writer's first byte, ascending) gets values[which[i]]. `pieces` is all the writer's
 * data, in order.
 */
export function fillInt8Slots(
  pieces: readonly Uint8Array[],
  offsets: ArrayLike<number>,
  values: readonly bigint[],
  which: ArrayLike<number>,
): void {
  let piece = 0;
  let start = 0; // offset of pieces[piece]
  for (let i = 0; i < offsets.length; i++) {
    const at = offsets[i];
    while (at >= start + pieces[piece].length) start += pieces[piece++].length;
    const p = pieces[piece];
    new DataView(p.buffer, p.byteOffset, p.byteLength).setBigInt64(at - start, values[which[i]]);
  }
}

/** Appends binary COPY data to chunks; `take()` hands over what is complete so far. */
export class BinaryCopyWriter implements ByteSink {
  private buf = Buffer.allocUnsafe(CHUNK_BYTES);
  private pos = 0;
  private ready: Buffer[] = [];
  private readyBytes = 0;
  /** bytes handed over by take() so far */
  private takenBytes = 0;
  /** where the elements of Int8Slots values were written, from the writer's first byte */
  private readonly slots: number[] = [];

  /**
   * framed (the default): the data starts with the format's header and take(true) ends it with
   * its trailer. Unframed: tuples only, to be sent between a COPY_HEADER and a COPY_TRAILER
   * (by copyTuples, say), so tuples encoded elsewhere (a worker thread) join one COPY.
   */
  constructor(
    private readonly columns: readonly CopyColumn[],
    private readonly options: { framed?: boolean } = {},
  ) {
    if (options.framed === false) return;
    this.ensure(COPY_HEADER.length);
    COPY_HEADER.copy(this.buf, this.pos);
    this.pos += COPY_HEADER.length;
  }

  /** One row: values in column order; null and undefined are SQL NULL. */
  row(values: readonly unknown[]): void {
    if (values.length !== this.columns.length)
      throw new Error(`COPY row has ${values.length} values for ${this.columns.length} columns`);
    this.ensure(2);
    this.buf.writeInt16BE(values.length, this.pos);
    this.pos += 2;
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v === null || v === undefined) {
        this.ensure(4);
        this.buf.writeInt32BE(-1, this.pos);
        this.pos += 4;
      } else {
        this.value(this.columns[i].type, v);
      }
    }
  }

  /** Bytes buffered so far, complete chunks first. */
  get pendingBytes(): number {
    return this.readyBytes + this.pos;
  }

  /** Hands over the data written so far; `end` appends the trailer of framed data (the last call). */
  take(end = false): Buffer[] {
    if (end && this.options.framed !== false) {
      this.ensure(2);
      this.buf.writeInt16BE(-1, this.pos);
      this.pos += 2;
    }
    if (this.pos > 0) {
      this.ready.push(this.buf.subarray(0, this.pos));
      this.buf = this.buf.subarray(this.pos);
      this.pos = 0;
    }
    const out = this.ready;
    for (const piece of out) this.takenBytes += piece.length;
    this.ready = [];
    this.readyBytes = 0;
    return out;
  }

  /** The offsets of every Int8Slots element written, from the writer's first byte, ascending. */
  slotOffsets(): readonly number[] {
    return this.slots;
  }

  private ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    if (this.pos > 0) {
      this.ready.push(this.buf.subarray(0, this.pos));
      this.readyBytes += this.pos;
    }
    this.buf = Buffer.allocUnsafe(Math.max(CHUNK_BYTES, bytes));
    this.pos = 0;
  }

  /** Length-prefixed bytes, as they are. */
  private raw(bytes: Uint8Array): void {
    this.ensure(4 + bytes.length);
    this.buf.writeInt32BE(bytes.length, this.pos);
    this.buf.set(bytes, this.pos + 4);
    this.pos += 4 + bytes.length;
  }

  /** A fixed-size value's length; the caller writes its bytes at the returned offset. */
  private fixed(size: number): number {
    this.ensure(4 + size);
    const at = this.pos;
    this.buf.writeInt32BE(size, at);
    this.pos += 4 + size;
    return at + 4;
  }

  /** ByteSink, for a Utf8Source (streamed): bytes at pos, as they are, in this chunk or a new one. */
  bytes(chunk: Uint8Array): void {
    this.ensure(chunk.length);
    this.buf.set(chunk, this.pos);
    this.pos += chunk.length;
  }

  /** ByteSink, for a Utf8Source (streamed): text's UTF-8 at pos, in this chunk or a new one. */
  utf8(text: string): void {
    this.ensure(utf8Room(text));
    this.pos += writeUtf8(this.buf, text, this.pos);
  }

  /**
   * Length-prefixed UTF-8, optionally after a one-byte prefix (jsonb's version); the length
   * is written after the text, in the room utf8Room made.
   */
  private text(text: string, prefix?: number): void {
    const extra = prefix === undefined ? 0 : 1;
    this.ensure(4 + extra + utf8Room(text));
    const at = this.pos;
    if (prefix !== undefined) this.buf[at + 4] = prefix;
    const written = writeUtf8(this.buf, text, at + 4 + extra);
    this.buf.writeInt32BE(written + extra, at);
    this.pos = at + 4 + extra + written;
  }

  /**
   * Length-prefixed UTF-8 that the value writes itself, optionally after a one-byte prefix.
   * The length is written last, where it was left room for: in this chunk or in one already
   * complete, which take() has not handed over yet (a row is written whole before).
   */
  private streamed(source: Utf8Source, prefix?: number): void {
    this.ensure(5);
    const lengthIn = this.buf;
    const lengthAt = this.pos;
    this.pos += 4;
    // bytes buffered grow by what is written here, whichever chunks it lands in
    const start = this.pendingBytes;
    if (prefix !== undefined) this.buf[this.pos++] = prefix;
    source.writeUtf8(this);
    lengthIn.writeInt32BE(this.pendingBytes - start, lengthAt);
  }

  /**
   * One non-NULL value in its column type's binary form. A method, not closures made with each
   * writer (docs/architecture.md, "Decisions and why").
   */
  private value(type: CopyType, v: unknown): void {
    switch (type) {
      case 'text':
        // UTF-8 already (a step's canonical request): its bytes as they are
        if (v instanceof Uint8Array) this.raw(v);
        else if (isUtf8Source(v)) this.streamed(v);
        else this.text(String(v));
        return;
      case 'jsonb':
        if (isUtf8Source(v)) this.streamed(v, 1);
        else this.text(String(v), 1);
        return;
      case 'bytea':
        this.raw(v as Uint8Array);
        return;
      // fixed() first: it may move on to a new chunk, which this.buf then names
      case 'bool': {
        const at = this.fixed(1);
        this.buf[at] = v ? 1 : 0;
        return;
      }
      case 'int4': {
        const at = this.fixed(4);
        this.buf.writeInt32BE(Number(v), at);
        return;
      }
      case 'int8': {
        const at = this.fixed(8);
        this.buf.writeBigInt64BE(typeof v === 'bigint' ? v : BigInt(v as string | number), at);
        return;
      }
      case 'float8': {
        const at = this.fixed(8);
        this.buf.writeDoubleBE(Number(v), at);
        return;
      }
      case 'int8[]':
        if (v instanceof Int8Slots) this.int8Slots(v.count);
        else this.int8Array(v as Int32Array);
        return;
      case 'text[]':
        this.textArray(v as readonly (string | null)[]);
        return;
    }
  }

  private textArray(values: readonly (string | null)[]): void {
    const elements = values.map((v) => (v === null ? null : Buffer.from(v, 'utf8')));
    let size = arrayHeaderSize(elements.length);
    for (const e of elements) size += 4 + (e?.length ?? 0);
    this.ensure(4 + size);
    const b = this.buf;
    b.writeInt32BE(size, this.pos);
    let at = writeArrayHeader(dataView(b), this.pos + 4, TEXT_OID, elements.length, elements.includes(null));
    for (const e of elements) {
      b.writeInt32BE(e === null ? -1 : e.length, at);
      if (e !== null) b.set(e, at + 4);
      at += 4 + (e?.length ?? 0);
    }
    this.pos = at;
  }

  /** An int8[] of `count` zeros, each element's offset recorded. */
  private int8Slots(count: number): void {
    if (count === 0) {
      this.int8Array(new Int32Array(0));
      return;
    }
    const size = 20 + count * 12;
    this.ensure(4 + size);
    const b = this.buf;
    b.writeInt32BE(size, this.pos);
    let at = writeArrayHeader(dataView(b), this.pos + 4, INT8_OID, count, false);
    // the data before this chunk: taken, and complete chunks not taken yet
    const base = this.takenBytes + this.readyBytes;
    for (let i = 0; i < count; i++) {
      b.writeInt32BE(8, at);
      b.fill(0, at + 4, at + 12);
      this.slots.push(base + at + 4);
      at += 12;
    }
    this.pos = at;
  }

  private int8Array(halves: Int32Array): void {
    const size = int8ArraySize(halves.length);
    this.ensure(4 + size);
    this.buf.writeInt32BE(size, this.pos);
    this.pos = writeInt8Array(this.buf, this.pos + 4, [halves], halves.length);
  }
}

/** The bytes of an int8[] of `halves` 32-bit halves in its binary form (see the module comment). */
function int8ArraySize(halves: number): number {
  return arrayHeaderSize(halves >> 1) + (halves >> 1) * 12;
}

/** The bytes of a one-dimensional array's header: an empty one has no dimensions. */
function arrayHeaderSize(count: number): number {
  return count === 0 ? 12 : 20;
}

/**
 * A one-dimensional array's header at `at` (see the module comment: dimensions, whether it
 * holds NULLs, element type, and for a non-empty one its length and lower bound 1); returns
 * the offset after it.
 */
function writeArrayHeader(b: DataView, at: number, elementOid: number, count: number, hasNulls: boolean): number {
  b.setInt32(at, count === 0 ? 0 : 1);
  b.setInt32(at + 4, hasNulls ? 1 : 0);
  b.setInt32(at + 8, elementOid);
  if (count === 0) return at + 12;
  b.setInt32(at + 12, count);
  b.setInt32(at + 16, 1);
  return at + 20;
}

/** A DataView over the bytes: it encodes numbers many times faster than Buffer's writeInt32BE. */
function dataView(bytes: Uint8Array): DataView {
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * One int8[] of the elements of `parts` (each 32-bit halves: high, low, ...), in order, in
 * its binary form: what PostgreSQL's array_send writes for a one-dimensional array without
 * NULLs, and what a binary query parameter takes. A Buffer, so `pg` sends it as one.
 */
export function int8ArrayBytes(parts: readonly Int32Array[]): Buffer {
  let halves = 0;
  for (const p of parts) halves += p.length;
  const out = Buffer.allocUnsafe(int8ArraySize(halves));
  writeInt8Array(out, 0, parts, halves);
  return out;
}

/**
 * Writes the binary form of the int8[] of `parts` (`halves` halves in all) at `at`, room
 * made; returns the offset after it.
 */
function writeInt8Array(into: Uint8Array, at: number, parts: readonly Int32Array[], halves: number): number {
  // a DataView: a large step's row holds thousands of words
  const b = dataView(into);
  at = writeArrayHeader(b, at, INT8_OID, halves >> 1, false);
  for (const p of parts)
    for (let i = 0; i < p.length; i += 2) {
      b.setInt32(at, 8);
      b.setInt32(at + 4, p[i]);
      b.setInt32(at + 8, p[i + 1]);
      at += 12;
    }
  return at;
}

function isUtf8Source(v: unknown): v is Utf8Source {
  return typeof v === 'object' && v !== null && typeof (v as Partial<Utf8Source>).writeUtf8 === 'function';
}

const INT8_OID = 20;
const TEXT_OID = 25;
