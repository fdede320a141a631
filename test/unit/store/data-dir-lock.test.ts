/**
 * One process at a time on an embedded database directory (src/store/data-dir-lock.ts):
 * PGlite itself opens a directory another process has open.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from '../../../src/store/data-dir-lock.js';
import { createPgliteDatabase } from '../../../src/store/pglite-database.js';
import { buildCli, ROOT } from '../../helpers/cli.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-lock-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const lockOf = (pid: number, host = os.hostname()) =>
  writeFileSync(path.join(dir, LOCK_FILE), `${JSON.stringify({ pid, host })}\n`);

describe('lockDataDir', () => {
  it('writes its pid into the lock and removes it on release, once', () => {
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8'))).toEqual({
      pid: process.pid,
      host: os.hostname(),
    });
    lock.release();
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(false);
    const again = lockDataDir(dir);
    lock.release(); // a second release of the first lock leaves the new one alone
    expect(existsSync(path.join(dir, LOCK_FILE))).toBe(true);
    again.release();
  });

  it('refuses a directory whose lock names a live process, naming it and what to do instead', () => {
    lockOf(process.ppid);
    const error = (() => {
      try {
        lockDataDir(dir);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(DataDirInUseError);
    expect((error as Error).message).toContain(`in use by process ${process.ppid}`);
    expect((error as Error).message).toContain('TAPEDECK_DATA_DIR');
    expect((error as Error).message).toContain('TAPEDECK_DATABASE_URL');
  });

  it('refuses a lock held by another host (it cannot tell whether that process runs)', () => {
    lockOf(1, 'some-other-host');
    expect(() => lockDataDir(dir)).toThrow(/process 1 on some-other-host/);
  });

  it('takes over the lock of a process that is gone (a crash)', () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    lockOf(gone);
    const lock = lockDataDir(dir);
    expect(JSON.parse(readFileSync(path.join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('takes over an unreadable lock (a crash while writing it)', () => {
    writeFileSync(path.join(dir, LOCK_FILE), '{"pi');
    lockDataDir(dir).release();
  });

  it('lets exactly one of several processes starting at once take over a stale lock', async () => {
    await buildCli();
    const module = path.join(ROOT, 'dist', 'src', 'store', 'data-dir-lock.js');
    // Each child waits for the same moment, tries, and holds what it got for a while.
    const child = `const { lockDataDir } = await import(${JSON.stringify(module)});
      while (Date.now() < Number(process.argv[1])) {}
      try { lockDataDir(${JSON.stringify(dir)}); console.log('got'); await new Promise((r) => setTimeout(r, 1500)); }
      catch (e) { console.log(e.name); }`;
    for (let round = 0; round < 3; round++) {
      lockOf(spawnSync(process.execPath, ['-e', '0']).pid!);
      const start = Date.now() + 700;
      const outcomes = await Promise.all(
        Array.from(
          { length: 6 },
          () =>
            new Promise<string>((resolve, reject) => {
              const p = spawn(process.execPath, ['--input-type=module', '-e', child, String(start)], {
                stdio: ['ignore', 'pipe', 'inherit'],
              });
              let out = '';
              p.stdout.on('data', (c) => {
                out += c;
              });
              p.on('error', reject);
              p.on('exit', () => resolve(out.trim()));
            }),
        ),
      );
      expect(
        outcomes.filter((o) => o === 'got'),
        outcomes.join(', '),
      ).toHaveLength(1);
      expect(outcomes.filter((o) => o !== 'got')).toEqual(Array(5).fill('DataDirInUseError'));
      // Nothing left behind but the winner's lock (its process has exited: stale for the next round).
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
