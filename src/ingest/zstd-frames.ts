/**
 * @module ingest/zstd-frames
 * Follows a zstd stream's frames (RFC 8878: frame header, blocks, optional checksum;
 * skippable frames) to read each frame's header before the decoder does, and refuses a frame
 * that declares a window or a content size over the decoded-size bound: the decoder would
 * allocate that window, up to 2 GiB, before a byte was decoded. Bytes it cannot follow (no
 * zstd magic) are left to the decoder to refuse.
 */
import { IngestError } from '../errors.js';

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MAGIC = 0x184d2a50; // 0x184D2A50..5F

type State = 'magic' | 'skippable' | 'descriptor' | 'header' | 'block' | 'lost';

export class ZstdFrameGuard {
  private state: State = 'magic';
  /** bytes of the header being read (magic, frame header or block header) */
  private header: number[] = [];
  /** its length once complete */
  private need = 4;
  /** bytes to pass over before the next header (block contents, checksums, skippable frames) */
  private skip = 0;
  private checksum = false;

  constructor(private readonly maxBytes: number) {}

  /** Follows the next bytes of the stream; throws too_large on a frame over the bound. */
  push(chunk: Uint8Array): void {
    let at = 0;
    while (at < chunk.length && this.following()) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, chunk.length - at);
        at += n;
        this.skip -= n;
        continue;
      }
      while (this.header.length < this.need && at < chunk.length) this.header.push(chunk[at++]);
      while (this.header.length >= this.need && this.following()) this.advance();
    }
  }

  private following(): boolean {
    return this.state !== 'lost';
  }

  private advance(): void {
    const h = this.header;
    switch (this.state) {
      case 'magic': {
        const magic = le(h, 0, 4);
        if (magic === ZSTD_MAGIC) this.expect('descriptor', 5, false);
        else if ((magic & 0xfffffff0) >>> 0 === SKIPPABLE_MAGIC) this.expect('skippable', 8, false);
        else this.state = 'lost';
        return;
      }
      case 'skippable':
        this.skip = le(h, 4, 4);
        this.expect('magic', 4);
        return;
      case 'descriptor': {
        const d = h[4];
        const singleSegment = (d >> 5) & 1;
        const fcsFlag = d >> 6;
        this.checksum = ((d >> 2) & 1) === 1;
        const dictBytes = [0, 1, 2, 4][d & 3];
        const fcsBytes = fcsFlag ? 1 << fcsFlag : singleSegment;
        this.expect('header', 5 + (singleSegment ? 0 : 1) + dictBytes + fcsBytes, false);
        return;
      }
      case 'header': {
        const d = h[4];
        const singleSegment = (d >> 5) & 1;
        const fcsFlag = d >> 6;
        const dictBytes = [0, 1, 2, 4][d & 3];
        const fcsBytes = fcsFlag ? 1 << fcsFlag : singleSegment;
        const fcsAt = 5 + (singleSegment ? 0 : 1) + dictBytes;
        const contentSize = fcsBytes === 0 ? undefined : le(h, fcsAt, fcsBytes) + (fcsBytes === 2 ? 256 : 0);
        if (contentSize !== undefined && contentSize > this.maxBytes) {
          throw tooLarge(`a zstd frame declares ${contentSize} bytes of content`, this.maxBytes);
        }
        if (!singleSegment) {
          const exponent = 2 ** (10 + (h[5] >> 3));
          const window = exponent + (exponent / 8) * (h[5] & 7);
          if (window > this.maxBytes) throw tooLarge(`a zstd frame declares a ${window}-byte window`, this.maxBytes);
        }
        this.expect('block', 3);
        return;
      }
      case 'block': {
        const value = le(h, 0, 3);
        const last = (value & 1) === 1;
        const type = (value >> 1) & 3;
        const size = value >>> 3;
        // an RLE block holds one byte, repeated size times
        this.skip = (type === 1 ? 1 : size) + (last && this.checksum ? 4 : 0);
        this.expect(last ? 'magic' : 'block', last ? 4 : 3);
        return;
      }
    }
  }

  private expect(state: State, need: number, fresh = true): void {
    this.state = state;
    this.need = need;
    if (fresh) this.header = [];
  }
}

/** Little-endian unsigned integer of `bytes` bytes at `at` (exact up to 2^53). */
function le(h: readonly number[], at: number, bytes: number): number {
  let value = 0;
  for (let i = bytes - 1; i >= 0; i--) value = value * 256 + h[at + i];
  return value;
}

function tooLarge(what: string, maxBytes: number): IngestError {
  return new IngestError(
    'too_large',
    `request body decompressed exceeds the ${maxBytes}-byte limit (--max-body-bytes): ${what}; split the batch; nothing was stored`,
  );
}
