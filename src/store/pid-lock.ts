/**
 * @module store/pid-lock
 * The embedded database directory's lock where it cannot be a socket (data-dir-lock.ts): a
 * file `tapedeck.lock`, created exclusively, holding the owner's pid and host. A lock whose
 * process is gone is stale and taken over; the process is looked up on this host only, so a
 * lock from another host, or naming a pid that now belongs to another process, stands until
 * removed by hand: the socket lock has neither weakness.
 *
 * Taking over is itself exclusive: only the holder of `tapedeck.lock.takeover` (created the
 * same way) may remove a lock it did not make, and it checks again, holding it, that the lock
 * is still stale.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, linkSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isProcessRunning } from './process-running.js';
import { DataDirInUseError, type DataDirLock, once, unlinkQuietly } from './data-dir-in-use.js';

interface Owner {
  pid: number;
  host: string;
}

const LOCK_FILE = 'tapedeck.lock';

/** Takes the directory's lock (the directory must exist); throws DataDirInUseError if held. */
export function lockDataDirByPid(dir: string): DataDirLock {
  const file = path.join(dir, LOCK_FILE);
  if (createOwned(file)) return { release: once(() => unlinkIfOwned(file)) };
  const owner = readOwner(file);
  if (owner && isAlive(owner)) throw new DataDirInUseError(dir, describe(owner));
  takeOver(dir, file);
  return { release: once(() => unlinkIfOwned(file)) };
}

/**
 * Replaces a stale lock with ours, holding the takeover file; throws DataDirInUseError when
 * another process is taking over or has just taken the directory.
 */
function takeOver(dir: string, file: string): void {
  const takeover = `${file}.takeover`;
  if (!createOwned(takeover)) {
    const taker = readOwner(takeover);
    if (taker && isAlive(taker)) throw new DataDirInUseError(dir, describe(taker));
    // A taker that died mid-takeover (rare: the window is a few system calls). Removing its
    // file is not exclusive, but only a crash inside that window and a start racing on it
    // together could let two processes in.
    unlinkQuietly(takeover);
    if (!createOwned(takeover)) throw inUse(dir, takeover);
  }
  try {
    const owner = readOwner(file);
    if (owner && isAlive(owner)) throw new DataDirInUseError(dir, describe(owner));
    unlinkQuietly(file);
    // A process that found no lock at all may create one in between: it holds the directory.
    if (!createOwned(file)) throw inUse(dir, file);
  } finally {
    unlinkIfOwned(takeover);
  }
}

/**
 * Creates `file` exclusively, holding our pid and host from the start; false when it exists.
 * The content is written to a file of our own and hard-linked into place, so no process ever
 * reads a lock half written (an empty lock would look stale).
 */
function createOwned(file: string): boolean {
  const content = `${JSON.stringify({ pid: process.pid, host: os.hostname() } satisfies Owner)}\n`;
  const own = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  writeFileSync(own, content, { flag: 'wx' });
  try {
    linkSync(own, file);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'EOPNOTSUPP') throw error;
    return createExclusively(file, content); // a filesystem without hard links
  } finally {
    unlinkQuietly(own);
  }
}

function createExclusively(file: string, content: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    writeSync(fd, content);
  } finally {
    closeSync(fd);
  }
  return true;
}

function inUse(dir: string, file: string): DataDirInUseError {
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

const describe = (owner: Owner) =>
  owner.host === os.hostname() ? `process ${owner.pid}` : `process ${owner.pid} on ${owner.host}`;

function unlinkIfOwned(file: string): void {
  const owner = readOwner(file);
  if (owner && owner.pid === process.pid && owner.host === os.hostname()) unlinkQuietly(file);
}
