/**
 * @module ingest/content-decoder
 * Content-Encoding of an OTLP/HTTP body: which codings are accepted, and a streaming decoder
 * for each that hands decoded bytes on as they come, so the caller can stop at its bound.
 * gzip and deflate use node:zlib; zstd (offered by the OpenTelemetry Collector) uses fzstd,
 * behind a check of each frame's header (zstd-frames.ts) because fzstd allocates the window
 * a frame declares, up to 2 GiB, before decoding a byte.
 */
import zlib from 'node:zlib';
import { Decompress } from 'fzstd';
import { IngestError } from '../errors.js';
import { ZstdFrameGuard } from './zstd-frames.js';

export type ContentCoding = 'identity' | 'gzip' | 'deflate' | 'zstd';

export const ACCEPTED_CONTENT_ENCODINGS = 'gzip, deflate, zstd or no encoding';

const codings: Record<string, ContentCoding> = {
  '': 'identity',
  identity: 'identity',
  gzip: 'gzip',
  'x-gzip': 'gzip',
  deflate: 'deflate',
  zstd: 'zstd',
};

/** The coding a Content-Encoding header names; anything else is unsupported_media_type (415). */
export function contentCodingOf(header: string | undefined): ContentCoding {
  const coding = codings[(header ?? '').trim().toLowerCase()];
  if (!coding) {
    throw new IngestError(
      'unsupported_media_type',
      `unsupported Content-Encoding ${JSON.stringify(header)}: send ${ACCEPTED_CONTENT_ENCODINGS}`,
    );
  }
  return coding;
}

export interface ContentDecoder {
  /** decodes a chunk; rejects with what onData threw, or bad_input when the bytes do not decode */
  write(chunk: Uint8Array): Promise<void>;
  /** the body is complete: decodes the rest, and rejects if the encoded data is truncated */
  end(): Promise<void>;
  /** releases the decoder (after a failure) */
  destroy(): void;
}

/** A decoder handing each decoded chunk to onData; what onData throws stops the decoding. */
export function contentDecoder(
  coding: ContentCoding,
  onData: (chunk: Uint8Array) => void,
  maxBytes: number,
): ContentDecoder {
  if (coding === 'identity') {
    return {
      async write(chunk) {
        onData(chunk);
      },
      async end() {},
      destroy() {},
    };
  }
  return coding === 'zstd' ? zstdDecoder(onData, maxBytes) : zlibDecoder(coding, onData);
}

function notDecodable(coding: ContentCoding, cause: unknown): IngestError {
  return new IngestError(
    'bad_input',
    `Content-Encoding is ${coding} but the body does not ${coding === 'zstd' ? 'decompress' : 'inflate'}: ${(cause as Error).message}; nothing was stored`,
    { cause },
  );
}

function zlibDecoder(coding: 'gzip' | 'deflate', onData: (chunk: Uint8Array) => void): ContentDecoder {
  let stream: zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | undefined;
  let failure: unknown;
  let head: Uint8Array | undefined; // deflate: the first byte, until the second tells the format
  const open = (first: Uint8Array) => {
    // deflate is the zlib format (RFC 1950); some senders send the raw stream (RFC 1951)
    // instead, which no zlib header begins.
    const zlibHeader = first.length >= 2 && (first[0] & 0x0f) === 8 && ((first[0] << 8) | first[1]) % 31 === 0;
    const s = coding === 'gzip' ? zlib.createGunzip() : zlibHeader ? zlib.createInflate() : zlib.createInflateRaw();
    s.on('data', (out: Buffer) => {
      if (failure) return;
      try {
        onData(out);
      } catch (error) {
        failure = error;
        s.destroy();
      }
    });
    s.on('error', (error) => {
      failure ??= notDecodable(coding, error);
    });
    return s;
  };
  /** Resolves on the event, or once the stream failed or closed. */
  const settled = (s: NonNullable<typeof stream>, event: 'drain' | 'end') =>
    new Promise<void>((resolve) => {
      const done = () => {
        s.off(event, done).off('error', done).off('close', done);
        resolve();
      };
      s.on(event, done).on('error', done).on('close', done);
    });
  return {
    async write(chunk) {
      if (!stream) {
        if (coding === 'deflate' && (head ? head.length : 0) + chunk.length < 2) {
          head = Buffer.concat([head ?? new Uint8Array(0), chunk]);
          return;
        }
        if (head) chunk = Buffer.concat([head, chunk]);
        head = undefined;
        stream = open(chunk);
      }
      if (failure) throw failure;
      if (!stream.write(chunk)) await settled(stream, 'drain');
      if (failure) throw failure;
    },
    async end() {
      stream ??= open(head ?? new Uint8Array(0));
      if (head) stream.write(head);
      if (failure) throw failure;
      const ended = settled(stream, 'end');
      stream.end();
      await ended;
      if (failure) throw failure;
    },
    destroy() {
      stream?.destroy();
    },
  };
}

function zstdDecoder(onData: (chunk: Uint8Array) => void, maxBytes: number): ContentDecoder {
  const guard = new ZstdFrameGuard(maxBytes);
  const decompress = new Decompress((chunk) => onData(chunk));
  // fzstd decodes synchronously: a chunk's blocks are handed to onData before push returns,
  // and what onData throws (the bound) comes out of push.
  const push = (chunk: Uint8Array, final: boolean) => {
    try {
      decompress.push(chunk, final);
    } catch (error) {
      throw error instanceof IngestError ? error : notDecodable('zstd', error);
    }
  };
  return {
    async write(chunk) {
      guard.push(chunk);
      push(chunk, false);
    },
    async end() {
      push(new Uint8Array(0), true);
    },
    destroy() {},
  };
}
