/**
 * What only the filesystem backend promises: where files go, that a crash can leave nothing
 * under a final name but complete bytes, and that put never rewrites a good file. The shared
 * contract runs in test/integration/payloads.test.ts.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFsPayloadStore } from '../../../src/payloads/fs-payload-store.js';
import { parsePayloadRef, payloadRefOf } from '../../../src/payloads/payload-store.js';

/** Root may make a directory immutable (chattr +i: no entry added or removed, for root too). */
const canChattr = (() => {
  if (process.getuid?.() !== 0) return false;
  const probe = mkdtempSync(path.join(tmpdir(), 'tapedeck-chattr-'));
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  } finally {
    rmSync(probe, { recursive: true, force: true });
  }
})();

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tapedeck-fs-payloads-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const bytes = new TextEncoder().encode('[{"content":"a long prompt","role":"user"}]');
const ref = payloadRefOf(bytes);
const { hex } = parsePayloadRef(ref);
const finalPath = () => path.join(dir, 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex);

async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => path.relative(root, path.join(e.parentPath ?? e.path, e.name)))
    .sort();
}

describe('filesystem payload store', () => {
  it('writes <dir>/sha256/ab/cd/<hex> holding exactly the bytes, readable by the owner only', async () => {
    await createFsPayloadStore({ dir }).put(bytes);
    expect(await readFile(finalPath())).toEqual(Buffer.from(bytes));
    expect((await stat(finalPath())).mode & 0o777).toBe(0o600);
  });

  it('creates the payload directory on demand', async () => {
    const nested = path.join(dir, 'not', 'yet', 'there');
    const store = createFsPayloadStore({ dir: nested });
    expect(await store.has(ref)).toBe(false);
    await store.put(bytes);
    expect(await store.get(ref)).toEqual(bytes);
  });

  it('leaves no temporary files behind, even after concurrent puts of the same bytes', async () => {
    const store = createFsPayloadStore({ dir });
    await Promise.all(Array.from({ length: 12 }, () => store.put(bytes)));
    expect(await filesUnder(dir)).toEqual([path.join('sha256', hex.slice(0, 2), hex.slice(2, 4), hex)]);
  });

  it('ignores a half-written temporary file left by a crash, and a later put completes', async () => {
    await mkdir(path.join(dir, 'tmp'), { recursive: true });
    await writeFile(path.join(dir, 'tmp', `${process.pid}.${hex}.abcdef.tmp`), bytes.subarray(0, 5));
    const store = createFsPayloadStore({ dir });
    expect(await store.has(ref)).toBe(false);
    expect(await store.get(ref)).toBeUndefined();
    await store.put(bytes);
    expect(await store.get(ref)).toEqual(bytes);
  });

  it('removes, when opened, the temporary files of processes that are gone, and only those', async () => {
    const gone = spawnSync(process.execPath, ['-e', '0']).pid!;
    const incoming = path.join(dir, 'tmp');
    await mkdir(incoming, { recursive: true });
    const leftover = `${gone}.${hex}.abcdef.tmp`;
    const inFlight = `${process.ppid}.${hex}.abcdef.tmp`; // a live process's write in progress
    const foreign = 'notes.txt';
    for (const name of [leftover, inFlight, foreign]) await writeFile(path.join(incoming, name), bytes.subarray(0, 5));
    createFsPayloadStore({ dir });
    expect((await readdir(incoming)).sort()).toEqual([inFlight, foreign].sort());
  });

  it('does not rewrite a payload that is already there (same file, untouched)', async () => {
    const store = createFsPayloadStore({ dir });
    await store.put(bytes);
    const before = await stat(finalPath());
    await store.put(bytes);
    const after = await stat(finalPath());
    expect(after.ino).toBe(before.ino);
    expect(after.mtimeMs).toBe(before.mtimeMs);
  });

  it.skipIf(!canChattr)(
    'removes the temporary files of puts whose directory froze mid-write once a put succeeds again',
    async () => {
      const store = createFsPayloadStore({ dir });
      await store.put(bytes);
      const incoming = path.join(dir, 'tmp');
      // puts in flight; the directory refuses changes while some are between write and rename
      const puts = Array.from({ length: 40 }, (_, i) =>
        store.put(new Uint8Array(512 * 1024).fill(i + 1)).then(
          () => 'stored',
          (error: Error) => String((error.cause as NodeJS.ErrnoException).code),
        ),
      );
      while (readdirSync(incoming).length === 0) await new Promise((r) => setImmediate(r));
      execFileSync('chattr', ['+i', incoming]);
      let outcomes: string[];
      let left: string[];
      try {
        outcomes = await Promise.all(puts);
        left = readdirSync(incoming);
      } finally {
        execFileSync('chattr', ['-i', incoming]);
      }
      // the race this is about happened: a put failed after writing, and could not unlink
      expect(outcomes).toContain('EPERM');
      expect(left.length).toBeGreaterThan(0);
      await store.put(new TextEncoder().encode('the directory takes changes again'));
      expect(readdirSync(incoming)).toEqual([]);
    },
  );

  it('replaces a truncated file on the next put instead of keeping it forever', async () => {
    const store = createFsPayloadStore({ dir });
    await store.put(bytes);
    await truncate(finalPath(), 3);
    await store.put(bytes);
    expect(await store.get(ref)).toEqual(bytes);
  });
});
