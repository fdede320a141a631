/**
 * @module payloads/fs-payload-store
 * The default payload backend: one file per payload at <dir>/sha256/ab/cd/<hex>, where
 * <dir> is the payload directory (by default <dataDir>/payloads) and ab, cd are the first
 * two bytes of the hash in hex, so each leaf directory holds about 1/65,536 of the payloads
 * and no single directory grows large enough to slow lookups.
 *
 * Crash safety: bytes are written to a temporary file in the payload's own directory,
 * fsynced, then renamed onto the final name (rename is atomic within one file system), and
 * the directory is fsynced so the rename itself survives a power cut. A crash therefore
 * leaves either no file under the final name or the complete one, never a prefix; at worst
 * it leaves a temporary file behind, which no read ever looks at. Temporary files are
 * written in one directory, <dir>/tmp (a rename from there is as atomic: same file system),
 * named after the writing process, so that opening the store can remove those of processes
 * that are gone without walking 65,536 shard directories.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, unlinkSync } from 'node:fs';
import { mkdir, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { isProcessRunning } from '../store/process-running.js';
import {
  type PayloadStore,
  PayloadStoreUnavailableError,
  asPlainBytes,
  parsePayloadRef,
  payloadRefOf,
  verifyPayload,
} from './payload-store.js';

export interface FsPayloadStoreSettings {
  /** The payload directory, e.g. path.join(config.dataDir, 'payloads'). Created on demand. */
  dir: string;
}

// Prompts and completions can hold secrets; only the server's own user needs to read them.
const FILE_MODE = 0o600;

export function createFsPayloadStore(settings: FsPayloadStoreSettings): PayloadStore {
  const root = path.resolve(settings.dir);
  const incoming = path.join(root, 'tmp');
  removeLeftovers(incoming);
  // Made by the first put rather than checked by every one (tried again if making it failed).
  let incomingMade: Promise<unknown> | undefined;
  const makeIncoming = () =>
    (incomingMade ??= mkdir(incoming, { recursive: true }).catch((error: unknown) => {
      incomingMade = undefined;
      throw error;
    }));

  // Temporary files a failed put could not remove either: a directory that turned read-only
  // (or immutable) between a write and its rename refuses the unlink too. A later put that
  // succeeds removes them, so none outlasts the fault.
  const stranded = new Set<string>();
  const removeStranded = async () => {
    for (const file of [...stranded]) {
      try {
        await unlink(file);
        stranded.delete(file);
      } catch (error) {
        if (isAbsent(error)) stranded.delete(file);
      }
    }
  };

  // parsePayloadRef admits only [0-9a-f]{64}, so a ref can never name a path outside root.
  const locate = (ref: string) => {
    const { algorithm, hex } = parsePayloadRef(ref);
    const shard = path.join(root, algorithm, hex.slice(0, 2), hex.slice(2, 4));
    return { hex, shard, file: path.join(shard, hex) };
  };

  const putFile = async (bytes: Uint8Array): Promise<string> => {
    const ref = payloadRefOf(bytes);
    const { hex, shard, file } = locate(ref);
    // Write-once: a file already there under this name is these bytes. Comparing its size
    // (not its hash, which would mean reading it) is enough to notice a truncated or
    // foreign file and put the right bytes back instead of keeping it forever.
    if ((await sizeOf(file)) === bytes.byteLength) return ref;
    await mkdir(shard, { recursive: true });
    await makeIncoming();
    // Unique per call: concurrent puts of the same bytes each write their own temporary
    // file, and whichever rename lands last replaces identical bytes with identical bytes.
    const temporary = path.join(incoming, `${process.pid}.${hex}.${randomBytes(6).toString('hex')}.tmp`);
    try {
      await writeDurably(temporary, bytes);
      await rename(temporary, file);
    } catch (error) {
      await unlink(temporary).catch((refused: unknown) => {
        if (!isAbsent(refused)) stranded.add(temporary);
      });
      throw error;
    }
    await syncDirectory(shard);
    if (stranded.size > 0) await removeStranded();
    return ref;
  };

  return {
    async put(bytes) {
      try {
        return await putFile(bytes);
      } catch (error) {
        if (!isStorageFault(error)) throw error;
        throw new PayloadStoreUnavailableError(
          `the payload directory ${root} cannot be written (${(error as NodeJS.ErrnoException).code}): ${(error as Error).message}`,
          { cause: error },
        );
      }
    },

    async get(ref) {
      const { file } = locate(ref);
      let bytes: Uint8Array;
      try {
        bytes = await readFile(file);
      } catch (error) {
        if (isAbsent(error)) return undefined;
        if (!isStorageFault(error)) throw error;
        throw new PayloadStoreUnavailableError(
          `the payload directory ${root} cannot be read (${(error as NodeJS.ErrnoException).code}): ${(error as Error).message}`,
          { cause: error },
        );
      }
      return verifyPayload(ref, asPlainBytes(bytes), 'filesystem');
    },

    async has(ref) {
      return (await sizeOf(locate(ref).file)) !== undefined;
    },

    async delete(ref) {
      const { file } = locate(ref);
      try {
        await unlink(file);
        return true;
      } catch (error) {
        if (isAbsent(error)) return false;
        throw error;
      }
    },
  };
}

/**
 * Removes the temporary files of processes that are gone (a crash between write and rename).
 * Those of live processes (another tapedeck sharing the directory) are left alone.
 */
function removeLeftovers(incoming: string): void {
  let names: string[];
  try {
    names = readdirSync(incoming);
  } catch {
    return; // no directory yet
  }
  for (const name of names) {
    const pid = Number(/^(\d+)\.[0-9a-f]+\.[0-9a-f]+\.tmp$/.exec(name)?.[1]);
    if (!Number.isInteger(pid) || isProcessRunning(pid)) continue;
    try {
      unlinkSync(path.join(incoming, name));
    } catch {
      // gone already, or not ours to remove
    }
  }
}

async function writeDurably(file: string, bytes: Uint8Array): Promise<void> {
  // 'wx': the name is fresh, so an existing file there means something is badly wrong.
  const handle = await open(file, 'wx', FILE_MODE);
  try {
    await handle.writeFile(bytes);
    // Without fsync the rename could reach the disk before the data: after a power cut the
    // final name would then point at an empty or partial file.
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncDirectory(dir: string): Promise<void> {
  let handle;
  try {
    handle = await open(dir, 'r');
    await handle.sync();
  } catch (error) {
    // Some platforms (Windows) cannot open or fsync a directory; the rename still happened.
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EPERM' && code !== 'EINVAL' && code !== 'EACCES') throw error;
  } finally {
    await handle?.close();
  }
}

/** The size of a regular file, or undefined when there is none under that name. */
async function sizeOf(file: string): Promise<number | undefined> {
  try {
    const info = await stat(file);
    return info.isFile() ? info.size : undefined;
  } catch (error) {
    if (isAbsent(error)) return undefined;
    throw error;
  }
}

/**
 * Any file system error while putting is a fault of the disk or directory rather than of the
 * bytes: no space or quota, an unwritable or read-only directory (which a recursive mkdir can
 * report as ENOENT), an I/O error, no file descriptors left.
 */
function isStorageFault(error: unknown): boolean {
  return typeof (error as NodeJS.ErrnoException | null)?.code === 'string';
}

// ENOTDIR: a shard path component exists as a file (foreign content); the payload is absent.
function isAbsent(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}
