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
  /** the memory of chunks taken and not handed back (recycle), held weakly: a chunk never handed back is let go */
  private readonly out = new WeakSet<ArrayBufferLike>();
  /** buffers handed back, written again before a new one is made */
  private readonly spare: Buffer<ArrayBuffer>[] = [];

  /** chunkBytes: the size a chunk is taken at (the buffer grows past it for a large value) */
  constructor(private readonly chunkBytes: number) {
    this.sink.buffer = this.fresh();
  }

  /** Whether a chunk's worth has been written since the last take(). */
  get full(): boolean {
    return this.sink.length >= this.chunkBytes;
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

  /**
   * The bytes written since the last take(), in the buffer they were written in; writing goes
   * on in another, one handed back (recycle) when there is one.
   */
  take(): Buffer {
    const sink = this.sink;
    const chunk = sink.buffer.subarray(0, sink.length);
    this.out.add(chunk.buffer);
    sink.buffer = this.spare.pop() ?? this.fresh();
    sink.length = 0;
    return chunk;
  }

  /**
   * Hands back a chunk taken earlier whose bytes nobody reads any more (the socket has sent
   * them): its buffer is written again rather than a new one made, whose fresh pages the
   * kernel would fault in one by one (docs/benchmarks.md, "Tape read"). Anything else, or a
   * chunk handed back twice, is left alone.
   */
  recycle(chunk: Uint8Array): void {
    if (!this.out.delete(chunk.buffer)) return;
    if (chunk.buffer.byteLength === this.chunkBytes + CHUNK_SLACK)
      this.spare.push(Buffer.from(chunk.buffer as ArrayBuffer));
  }

  private fresh(): Buffer<ArrayBuffer> {
    return Buffer.allocUnsafe(this.chunkBytes + CHUNK_SLACK);
  }
}

/** Room past a chunk's size, for the value that crosses it. */
const CHUNK_SLACK = 64 * 1024;
