/**
 * One process at a time on an embedded database directory (src/store/data-dir-lock.ts):
 * PGlite itself opens a directory another process has open. The lock is held by real child
 * processes, killed with SIGKILL as a crash or an OOM kill would, and started as PID 1 of
 * a PID namespace of their own, as node runs in a container, where the system allows it.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from '../../../src/store/data-dir-lock.js';
import { createPgliteDatabase } from '../../../src/store/pglite-database.js';
import { buildCli, ROOT } from '../../helpers/cli.js';

const MODULE = path.join(ROOT, 'dist', 'src', 'store', 'data-dir-lock.js');
const pidNamespaces =
  process.platform === 'linux' &&
  spawnSync('unshare', [
    '--pid',
    '--fork',
    '--kill-child',
    process.execPath,
    '-e',
    'process.exit(process.pid === 1 ? 0 : 1)',
  ]).status === 0;

let dir: string;
const children: ChildProcess[] = [];
beforeAll(async () => {
  await buildCli();
}, 120_000);
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-lock-'));
});
afterEach(() => {
  for (const c of children.splice(0)) c.kill('SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

interface Holder {
  process: ChildProcess;
  /** the child's first line: "locked <pid>" or "<error name> <message>" */
  said: Promise<string>;
  /** resolves once the child (and, in a namespace, its node) is gone */
  gone: Promise<void>;
}

/** A child process that takes the directory's lock and holds it until killed. */
function holder(options: { pidNamespace?: boolean; at?: number } = {}): Holder {
  const script = `const { lockDataDir } = await import(${JSON.stringify(MODULE)});
    while (Date.now() < ${options.at ?? 0}) {}
    try { await lockDataDir(${JSON.stringify(dir)}); console.log('locked ' + process.pid); }
    catch (e) { console.log(e.name + ' ' + e.message); process.exit(0); }
    setInterval(() => {}, 1000);`;
  const node = [process.execPath, '--input-type=module', '-e', script];
  const [command, ...args] = options.pidNamespace ? ['unshare', '--pid', '--fork', '--kill-child', ...node] : node;
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  let out = '';
  const said = new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (c) => {
      out += c;
      if (out.includes('\n')) resolve(out.split('\n')[0]);
    });
    child.on('error', reject);
    child.on('close', () => resolve(out.trim()));
  });
  const gone = new Promise<void>((resolve) => child.on('close', () => resolve()));
  return { process: child, said, gone };
}

async function killed(h: Holder): Promise<void> {
  h.process.kill('SIGKILL');
  await h.gone;
}

describe('lockDataDir', () => {
  it('holds a socket at tapedeck.lock and removes it on release, once', async () => {
    const lock = await lockDataDir(dir);
    expect(statSync(path.join(dir, LOCK_FILE)).isSocket()).toBe(true);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    lock.release();
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    const again = await lockDataDir(dir);
    lock.release(); // a second release of the first lock leaves the new one alone
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(true);
    await expect(lockDataDir(dir)).rejects.toBeInstanceOf(DataDirInUseError);
    again.release();
  });

  it('refuses a directory another live process holds, naming it and what to do instead', async () => {
    const h = holder();
    const said = await h.said;
    expect(said).toMatch(/^locked \d+$/);
    const error = await lockDataDir(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect((error as Error).message).toContain(`in use by process ${said.split(' ')[1]}`);
    expect((error as Error).message).toContain('TAPEDECK_DATA_DIR');
    expect((error as Error).message).toContain('TAPEDECK_DATABASE_URL');
    // and the holder still holds it after the refusal
    expect(await holder().said).toMatch(/^DataDirInUseError /);
  }, 30_000);

  it('takes over the lock of a process killed with SIGKILL, by itself', async () => {
    const h = holder();
    expect(await h.said).toMatch(/^locked /);
    await killed(h);
    expect(statSync(path.join(dir, LOCK_FILE)).isSocket()).toBe(true); // left behind
    const lock = await lockDataDir(dir);
    expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    lock.release();
  }, 30_000);

  it.skipIf(!pidNamespaces)(
    'takes over the lock of a killed PID 1 when it starts again as PID 1 (a container restarted)',
    async () => {
      const first = holder({ pidNamespace: true });
      expect(await first.said).toBe('locked 1');
      await killed(first);
      const second = holder({ pidNamespace: true });
      expect(await second.said).toBe('locked 1');
      // and the restarted one holds it against others
      await expect(lockDataDir(dir)).rejects.toThrow(/in use by process 1/);
    },
    30_000,
  );

  it('takes over a pid lock file naming a live process or another host (left by an older tapedeck)', async () => {
    writeFileSync(path.join(dir, LOCK_FILE), `${JSON.stringify({ pid: process.ppid, host: os.hostname() })}\n`);
    (await lockDataDir(dir)).release();
    writeFileSync(path.join(dir, LOCK_FILE), `${JSON.stringify({ pid: 1, host: 'a-recreated-container' })}\n`);
    (await lockDataDir(dir)).release();
  });

  it('lets exactly one of several processes starting at once take over a stale lock', async () => {
    for (let round = 0; round < 3; round++) {
      const stale = holder();
      expect(await stale.said).toMatch(/^locked /);
      await killed(stale);
      const at = Date.now() + 700;
      const outcomes = await Promise.all(Array.from({ length: 6 }, () => holder({ at }).said));
      expect(
        outcomes.filter((o) => o.startsWith('locked')),
        outcomes.join(', '),
      ).toHaveLength(1);
      expect(outcomes.filter((o) => !o.startsWith('locked')).map((o) => o.split(' ')[0])).toEqual(
        Array(5).fill('DataDirInUseError'),
      );
      for (const c of children.splice(0)) {
        c.kill('SIGKILL');
      }
      await new Promise((r) => setTimeout(r, 200));
      // Nothing left behind but the winner's lock (its process is killed: stale for the next round).
      expect(readdirSync(dir)).toEqual([LOCK_FILE]);
    }
  }, 120_000);
});

describe('createPgliteDatabase', () => {
  it('refuses a directory already open, and opens it again once closed', async () => {
    const first = await createPgliteDatabase(dir);
    await expect(createPgliteDatabase(dir)).rejects.toBeInstanceOf(DataDirInUseError);
    expect(await first.query('SELECT 1 AS one')).toEqual([{ one: 1 }]);
    await first.close();
    const second = await createPgliteDatabase(dir);
    await second.close();
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false);
  }, 60_000);
});
