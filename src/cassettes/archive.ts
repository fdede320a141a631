/**
 * @module cassettes/archive
 * A cassette's container: an uncompressed POSIX tar, written and read with `tar-stream`.
 * Every entry's size is in its header before its bytes, so each bound is checked before an
 * entry is read, and nothing is decompressed (no archive bomb). Reading is streaming and
 * bounded: the file's size is checked first, the manifest must come first and is bounded
 * itself, every later entry must be a regular file the manifest declares with that size, and
 * its bytes are hashed as they arrive. Anything else is refused with the file and the reason:
 * an undeclared or unrecognised file, a link or directory, a path escaping the archive, a
 * duplicate, a hash or size mismatch, a declared file that is missing.
 */
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import tar from 'tar-stream';
import {
  CassetteInvalid,
  type CassetteLimits,
  checkFramePolicy,
  MANIFEST_PATH,
  type Manifest,
  MAX_MANIFEST_BYTES,
  parseManifest,
  roleOfPath,
  sha256,
  unsafePathReason,
} from './format.js';

/** One file to write: its path inside the cassette and its bytes. */
export interface ArchiveFile {
  path: string;
  bytes: Buffer;
}

/** A fixed modification time, so the same content gives the same file. */
const EPOCH = new Date(0);

/** The tar bytes of the manifest followed by the files, in the order given. */
export async function writeArchive(manifest: Buffer, files: readonly ArchiveFile[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of pack) chunks.push(chunk as Buffer);
  })();
  for (const f of [{ path: MANIFEST_PATH, bytes: manifest }, ...files]) {
    await new Promise<void>((resolve, reject) =>
      pack.entry({ name: f.path, size: f.bytes.length, mode: 0o644, mtime: EPOCH, type: 'file' }, f.bytes, (err) =>
        err ? reject(err) : resolve(),
      ),
    );
  }
  pack.finalize();
  await collected;
  return Buffer.concat(chunks);
}

export interface ReadArchive {
  manifest: Manifest;
  /** the manifest's bytes, as read */
  manifestBytes: Buffer;
  /** every declared file's bytes, by path (when kept) */
  files: Map<string, Buffer>;
  /** the archive's size in bytes */
  sizeBytes: number;
}

export interface ReadOptions {
  limits: CassetteLimits;
  /** false: hash the files without keeping them (verify) */
  keepFiles?: boolean;
}

/** Reads and audits a cassette file (module comment). */
export async function readArchiveFile(file: string, options: ReadOptions): Promise<ReadArchive> {
  let size: number;
  try {
    size = (await stat(file)).size;
  } catch (error) {
    throw new CassetteInvalid(file, `cannot be read (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
  if (size > options.limits.maxCassetteBytes)
    throw new CassetteInvalid(
      file,
      `is ${size} bytes, over the ${options.limits.maxCassetteBytes}-byte limit per cassette`,
    );
  return readArchiveStream(createReadStream(file), size, options);
}

/** The same audit over bytes already in memory (an HTTP body, a test). */
export function readArchiveBytes(bytes: Buffer, options: ReadOptions): Promise<ReadArchive> {
  if (bytes.length > options.limits.maxCassetteBytes)
    return Promise.reject(
      new CassetteInvalid(
        'cassette',
        `is ${bytes.length} bytes, over the ${options.limits.maxCassetteBytes}-byte limit per cassette`,
      ),
    );
  return readArchiveStream(Readable.from([bytes]), bytes.length, options);
}

async function readArchiveStream(source: Readable, sizeBytes: number, options: ReadOptions): Promise<ReadArchive> {
  const keep = options.keepFiles ?? true;
  const extract = tar.extract();
  let manifest: Manifest | null = null;
  let manifestBytes: Buffer | null = null;
  let declared = new Map<string, { sha256: string; size: number }>();
  const seen = new Set<string>();
  const files = new Map<string, Buffer>();

  const consume = (async () => {
    for await (const entry of extract) {
      const h = entry.header;
      const name = h.name;
      const unsafe = unsafePathReason(name);
      if (unsafe) throw new CassetteInvalid(name, `refused: ${unsafe}`);
      if (h.type !== 'file')
        throw new CassetteInvalid(
          name,
          `refused: a ${h.type ?? 'non-file'} entry (a cassette holds regular files only)`,
        );
      if (seen.has(name)) throw new CassetteInvalid(name, 'refused: the archive holds it twice');
      seen.add(name);
      const entrySize = h.size ?? 0;
      if (manifest === null) {
        if (name !== MANIFEST_PATH)
          throw new CassetteInvalid(name, `refused: the first file must be the manifest ${MANIFEST_PATH}`);
        if (entrySize > MAX_MANIFEST_BYTES)
          throw new CassetteInvalid(name, `is ${entrySize} bytes, over the ${MAX_MANIFEST_BYTES}-byte manifest limit`);
        manifestBytes = await readEntry(entry);
        manifest = parseManifest(manifestBytes);
        checkFramePolicy(manifest, options.limits);
        declared = declaredFiles(manifest);
        continue;
      }
      const want = declared.get(name);
      if (!want) {
        const known = roleOfPath(name) !== null;
        throw new CassetteInvalid(
          name,
          known
            ? 'refused: not declared in the manifest'
            : 'refused: not a file a cassette may hold (only the manifest, run files and referenced blobs)',
        );
      }
      if (entrySize !== want.size)
        throw new CassetteInvalid(name, `is ${entrySize} bytes, but the manifest declares ${want.size}`);
      const bytes = await readEntry(entry);
      const got = sha256(bytes);
      if (got !== want.sha256)
        throw new CassetteInvalid(name, `its SHA-256 ${got} does not match the manifest's ${want.sha256}`);
      if (keep) files.set(name, bytes);
    }
  })();
  let feedError: unknown = null;
  const feed = pipeline(source, extract).catch((error: unknown) => {
    feedError = error;
  });
  try {
    await consume;
  } catch (error) {
    source.destroy();
    extract.destroy();
    if (error instanceof CassetteInvalid) throw error;
    throw unreadable(error);
  }
  await feed;
  if (feedError !== null) throw unreadable(feedError);
  if (manifest === null || manifestBytes === null)
    throw new CassetteInvalid(MANIFEST_PATH, 'missing: the archive holds no manifest');
  for (const name of declared.keys())
    if (!seen.has(name)) throw new CassetteInvalid(name, 'missing: declared in the manifest but not in the archive');
  return { manifest, manifestBytes, files, sizeBytes };
}

function declaredFiles(m: Manifest): Map<string, { sha256: string; size: number }> {
  const out = new Map<string, { sha256: string; size: number }>();
  for (const f of m.files) {
    const unsafe = unsafePathReason(f.path);
    if (unsafe) throw new CassetteInvalid(f.path, `refused: the manifest declares ${unsafe}`);
    if (roleOfPath(f.path) === null || f.path === MANIFEST_PATH)
      throw new CassetteInvalid(f.path, 'refused: the manifest declares a file a cassette may not hold');
    if (out.has(f.path)) throw new CassetteInvalid(f.path, 'refused: the manifest declares it twice');
    out.set(f.path, { sha256: f.sha256, size: f.size });
  }
  return out;
}

/** A cut or corrupt tar: the reader says what it could not parse. */
function unreadable(error: unknown): CassetteInvalid {
  return new CassetteInvalid(
    'cassette',
    `is not a readable tar archive (${(error as Error)?.message ?? String(error)})`,
  );
}

async function readEntry(entry: AsyncIterable<Buffer>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of entry) chunks.push(c);
  return Buffer.concat(chunks);
}
