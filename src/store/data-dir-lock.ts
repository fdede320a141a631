/**
 * @module store/data-dir-lock
 * One process at a time on an embedded database directory. PGlite opens a directory that
 * another process has open without complaint, and two writers corrupt it; so tapedeck holds
 * a lock while the database is open: a Unix domain socket listening at `tapedeck.lock` in the
 * directory. The kernel closes it when the process ends, however it ends (kill -9, an OOM
 * kill): a live owner accepts a connection there (and names itself), a dead one's socket
 * refuses it. Liveness is never judged by pid or host name, so a lock left by node as PID 1
 * of a killed container, or by a container since recreated under another host name, is taken
 * over at the next start without anyone deleting a file.
 *
 * Taking the lock is exclusive: each process listens at a name of its own first and
 * hard-links that socket to `tapedeck.lock`, which fails when the name exists. Replacing a
 * stale lock is exclusive too: only the holder of `tapedeck.lock.takeover` (linked the same
 * way) may, after checking again that the lock still refuses connections.
 *
 * Where the directory cannot hold a socket (its path is too long for one, or its file system
 * has none), the lock is a file naming the owner's pid and host (pid-lock.ts).
 */
import { randomBytes } from 'node:crypto';
import { linkSync, renameSync, statSync, unlinkSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DataDirInUseError, type DataDirLock, once, unlinkQuietly } from './data-dir-in-use.js';
import { lockDataDirByPid } from './pid-lock.js';

export { DataDirInUseError, type DataDirLock } from './data-dir-in-use.js';

export const LOCK_FILE = 'tapedeck.lock';

/** Unix socket paths are limited to 108 bytes on Linux (104 on macOS), with the terminator. */
const MAX_SOCKET_PATH = 100;

/** Takes the directory's lock (the directory must exist); rejects with DataDirInUseError if held. */
export async function lockDataDir(dir: string): Promise<DataDirLock> {
  const file = path.join(dir, LOCK_FILE);
  const own = path.join(dir, `${LOCK_FILE}.${randomBytes(4).toString('hex')}`);
  if (Buffer.byteLength(own) > MAX_SOCKET_PATH || process.platform === 'win32') return lockDataDirByPid(dir);
  let server: net.Server;
  try {
    server = await listen(own);
  } catch (error) {
    if (isNoSocketHere(error)) return lockDataDirByPid(dir);
    throw error;
  }
  const ino = statSync(own).ino;
  const release = once(() => {
    server.close();
    unlinkIf(file, ino);
    unlinkIf(own, ino);
  });
  try {
    await take(dir, file, own, ino);
    unlinkIf(own, ino); // the lock's name keeps the socket reachable
    return { release };
  } catch (error) {
    release();
    throw error;
  }
}

async function take(dir: string, file: string, own: string, ino: number): Promise<void> {
  // A lock that vanishes between our link and our look (released meanwhile): try again.
  for (let attempt = 0; attempt < 3; attempt++) {
    if (linkExclusively(own, file)) return;
    const holder = await probe(file);
    if (holder.state === 'live') throw new DataDirInUseError(dir, holder.owner);
    if (holder.state === 'absent') continue;
    await takeOver(dir, file, own, ino);
    return;
  }
  throw new DataDirInUseError(dir, 'another process');
}

/** Replaces a stale lock with ours, holding the takeover name; DataDirInUseError when another process is taking over. */
async function takeOver(dir: string, file: string, own: string, ino: number): Promise<void> {
  const takeover = `${file}.takeover`;
  if (!linkExclusively(own, takeover)) {
    const taker = await probe(takeover);
    if (taker.state === 'live') throw new DataDirInUseError(dir, taker.owner);
    // A taker that died mid-takeover (rare: the window is a few system calls). Removing its
    // name is not exclusive, but only a crash inside that window and a start racing on it
    // together could let two processes in.
    unlinkQuietly(takeover);
    if (!linkExclusively(own, takeover)) throw new DataDirInUseError(dir, 'another process');
  }
  try {
    const holder = await probe(file);
    if (holder.state === 'live') throw new DataDirInUseError(dir, holder.owner);
    // atomic: the stale lock is replaced by ours, never absent in between
    renameSync(own, file);
  } finally {
    unlinkIf(takeover, ino);
  }
}

function listen(socketPath: string): Promise<net.Server> {
  const who = `${JSON.stringify({ pid: process.pid, host: os.hostname() })}\n`;
  const server = net.createServer((connection) => {
    connection.on('error', () => {});
    connection.end(who);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      server.on('error', () => {});
      server.unref(); // the lock never keeps the process alive
      resolve(server);
    });
  });
}

type Probe = { state: 'live'; owner: string } | { state: 'stale' } | { state: 'absent' };

/** Whether a process accepts connections at the lock's name (and who it says it is). */
function probe(socketPath: string): Promise<Probe> {
  return new Promise((resolve) => {
    const connection = net.connect(socketPath);
    let said = '';
    let connected = false;
    const live = (): void => {
      clearTimeout(timer);
      connection.destroy();
      resolve({ state: 'live', owner: describe(said) });
    };
    // A live owner whose event loop is busy has accepted (the kernel did) but not answered yet.
    const timer = setTimeout(live, 1_000);
    connection.on('connect', () => {
      connected = true;
    });
    connection.on('data', (chunk: Buffer) => {
      said += chunk.toString('utf8');
    });
    connection.on('end', live);
    connection.on('error', (error: NodeJS.ErrnoException) => {
      if (connected) return live();
      clearTimeout(timer);
      if (error.code === 'ENOENT') resolve({ state: 'absent' });
      // refused: a socket nobody listens at, or a file that is no socket (a pid lock)
      else if (error.code === 'ECONNREFUSED' || error.code === 'ENOTSOCK') resolve({ state: 'stale' });
      else resolve({ state: 'live', owner: `a process this one cannot reach (${error.code})` });
    });
  });
}

function describe(said: string): string {
  try {
    const owner = JSON.parse(said) as { pid?: unknown; host?: unknown };
    if (typeof owner.pid === 'number' && typeof owner.host === 'string')
      return owner.host === os.hostname() ? `process ${owner.pid}` : `process ${owner.pid} on ${owner.host}`;
  } catch {
    // said nothing (yet)
  }
  return 'another process';
}

/** Links existing to name; false when name exists. */
function linkExclusively(existing: string, name: string): boolean {
  try {
    linkSync(existing, name);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** A directory that cannot hold a listening socket (some network and shared-folder file systems). */
function isNoSocketHere(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'EACCES' || code === 'EINVAL';
}

/** Removes name when it is still our socket (not a lock another process made since). */
function unlinkIf(name: string, ino: number): void {
  try {
    if (statSync(name).ino === ino) unlinkSync(name);
  } catch {
    // already gone
  }
}
