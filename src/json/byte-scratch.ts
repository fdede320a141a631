/**
 * @module json/byte-scratch
 * A growing buffer that JSON is written into as UTF-8: canonicalJsonBytes's and
 * renderJsonBytes's, reused from call to call (their results are copied out), and a
 * JsonBytesWriter's own, taken a chunk at a time.
 */
import type { ByteSink } from './json-string.js';
import { utf8Room, writeUtf8 } from './write-utf8.js';

export class ByteScratch implements ByteSink {
  buffer = Buffer.allocUnsafe(64 * 1024);
  length = 0;

  bytes(chunk: Uint8Array): void {
    this.ensure(chunk.length);
    this.buffer.set(chunk, this.length);
    this.length += chunk.length;
  }

  utf8(text: string): void {
    this.ensure(utf8Room(text));
    this.length += writeUtf8(this.buffer, text, this.length);
  }

  /** Text the caller knows is ASCII, copied unchecked: each UTF-16 unit is its byte. */
  ascii(text: string): void {
    const n = text.length;
    this.ensure(n);
    const buf = this.buffer;
    let at = this.length;
    for (let i = 0; i < n; i++) buf[at++] = text.charCodeAt(i);
    this.length = at;
  }

  /** `"text"` when text is printable ASCII without a quote or backslash (its JSON), else nothing and false. */
  plainAscii(text: string): boolean {
    const n = text.length;
    this.ensure(n + 2);
    const buf = this.buffer;
    const at = this.length;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
      buf[at + 1 + i] = c;
    }
    buf[at] = 0x22;
    buf[at + 1 + n] = 0x22;
    this.length = at + n + 2;
    return true;
  }

  /** After a value of megabytes: back to the usual size, rather than hold on to it. */
  shrink(): void {
    if (this.buffer.length > 1024 * 1024) this.buffer = Buffer.allocUnsafe(64 * 1024);
  }

  private ensure(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.length + bytes));
    this.buffer.copy(next, 0, 0, this.length);
    this.buffer = next;
  }
}
