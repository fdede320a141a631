/**
 * @module json/json-bytes-writer
 * A long JSON document written piece by piece and sent a chunk at a time (a tape's answer,
 * tapes/tape-json.ts).
 */
import { ByteScratch } from './byte-scratch.js';
import { type RenderedJson, renderedInto, renderInto } from './canonical.js';

/**
 * A document written piece by piece, member names and punctuation as they are, values as
 * renderJson writes them, into a buffer of its own that is taken a chunk at a time (take()):
 * for a long document whose shape the caller knows (a tape's steps), written without walking
 * and sorting each object's keys, and sent while the rest of it is written.
 */
export class JsonBytesWriter {
  private readonly sink = new ByteScratch();

  /** chunkBytes: the size a chunk is taken at (the buffer grows past it for a large value) */
  constructor(private readonly chunkBytes: number) {
    this.sink.buffer = Buffer.allocUnsafe(chunkBytes + CHUNK_SLACK);
  }

  /** Bytes written since the last take(). */
  get length(): number {
    return this.sink.length;
  }

  /** Text that is JSON already (punctuation, `"name":`, RenderedJson's pieces). */
  raw(text: string): void {
    this.sink.utf8(text);
  }

  /**
   * JSON text known to be ASCII (member names, punctuation), copied without the checks and
   * the call into C++ that raw() makes for text that may not be.
   */
  ascii(text: string): void {
    this.sink.ascii(text);
  }

  /** A number as value() writes it: a bigint exactly, null when not finite. */
  number(n: number | bigint | null): void {
    this.sink.ascii(
      n === null ? 'null' : typeof n === 'bigint' ? n.toString() : Number.isFinite(n) ? String(n) : 'null',
    );
  }

  value(value: unknown): void {
    renderInto(value, this.sink);
  }

  /**
   * A string or null, as value() writes it; printable ASCII without a quote or backslash (ids,
   * digests, names) goes straight into the buffer, with no JSON string made for it.
   */
  string(text: string | null): void {
    if (text === null || !this.sink.plainAscii(text)) this.value(text);
  }

  /** Stored JSON text (RenderedJson) or null, as value() writes it. */
  rendered(json: RenderedJson | null): void {
    if (json === null) this.sink.utf8('null');
    else renderedInto(json, this.sink);
  }

  /** The bytes written since the last take(), in the buffer they were written in; writing goes on in a new one. */
  take(): Buffer {
    const sink = this.sink;
    const out = sink.buffer.subarray(0, sink.length);
    sink.buffer = Buffer.allocUnsafe(this.chunkBytes + CHUNK_SLACK);
    sink.length = 0;
    return out;
  }
}

/** Room past a chunk's size, for the value that crosses it. */
const CHUNK_SLACK = 64 * 1024;
