/**
 * @module store/data-dir-lock
 * One process at a time on an embedded database directory. PGlite opens a directory that
 * another process has open without complaint, and two writers corrupt it; so tapedeck holds
 * a lock file (`tapedeck.lock`, created exclusively, holding the owner's pid and host) while
 * the database is open. A lock whose process is gone (a crash, a kill -9) is stale and taken
 * over; the process is looked up on this host only, so a directory shared over a network
 * filesystem is refused while another host's lock stands.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isProcessRunning } from './process-running.js';

export class DataDirInUseError extends Error {
  constructor(readonly dir: string, readonly owner: string) {
    super(
      `the embedded database in ${dir} is in use by ${owner}: stop that tapedeck first, or use another ` +
        '--data-dir (TAPEDECK_DATA_DIR), or a PostgreSQL server (TAPEDECK_DATABASE_URL) that several processes can share',
    );
    this.name = 'DataDirInUseError';
  }
}

export interface DataDirLock {
  release(): void;
}

interface Owner {
  pid: number;
  host: string;
}

export const LOCK_FILE = 'tapedeck.lock';

/** Takes the directory's lock (the directory must exist); throws DataDirInUseError if held. */
export function lockDataDir(dir: string): DataDirLock {
  const file = path.join(dir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(file, 'wx');
      try {
        writeSync(fd, `${JSON.stringify({ pid: process.pid, host: os.hostname() } satisfies Owner)}\n`);
      } finally {
        closeSync(fd);
      }
      return { release: once(() => unlinkIfOwned(file)) };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw inUse(error, dir, file);
      const owner = readOwner(file);
      if (owner && isAlive(owner)) throw new DataDirInUseError(dir, describe(owner));
      // Stale (or unreadable, a crash mid-write): remove it and try once more. Not safe against
      // two processes taking over the same stale lock at the same moment: the second one's
      // unlink can remove the lock the first has just made, and both go on.
      unlinkQuietly(file);
    }
  }
}

function inUse(error: unknown, dir: string, file: string): Error {
  if ((error as NodeJS.ErrnoException).code !== 'EEXIST') return error as Error;
  const owner = readOwner(file);
  return new DataDirInUseError(dir, owner ? describe(owner) : 'another process');
}

function readOwner(file: string): Owner | null {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Partial<Owner>;
    return Number.isInteger(owner.pid) && typeof owner.host === 'string' ? (owner as Owner) : null;
  } catch {
    return null;
  }
}

function isAlive(owner: Owner): boolean {
  if (owner.host !== os.hostname()) return true; // cannot tell: assume it runs
  return isProcessRunning(owner.pid); // this process too: it opened the directory already
}

const describe = (owner: Owner) => (owner.host === os.hostname() ? `process ${owner.pid}` : `process ${owner.pid} on ${owner.host}`);

function unlinkIfOwned(file: string): void {
  const owner = readOwner(file);
  if (owner && owner.pid === process.pid && owner.host === os.hostname()) unlinkQuietly(file);
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
