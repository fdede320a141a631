/**
 * Every kind of file-system failure under the filesystem payload store is a fault a retry may
 * cure (PayloadStoreUnavailableError, answered 503 with Retry-After: see
 * test/integration/ingest-storage-faults.test.ts for the answer with real read-only and full
 * file systems), and a failed put leaves nothing under a final name and no temporary file.
 *
 * A disk that fails with EIO, and EACCES for a process running as root, cannot be produced on
 * this machine, so the file system's calls are made to fail here, with each errno code, at
 * each step of a put: opening the temporary file, writing it, syncing it, renaming it.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const fault = vi.hoisted(() => ({ code: null as string | null, at: '' }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const failure = (at: string) => {
    if (fault.code === null || fault.at !== at) return null;
    return Object.assign(new Error(`${fault.code}: injected at ${at}`), { code: fault.code, syscall: at });
  };
  const open: typeof real.open = async (...args) => {
    const opened = failure('open');
    if (opened) throw opened;
    const handle = await real.open(...args);
    return new Proxy(handle, {
      get(target, key) {
        const value = Reflect.get(target, key, target);
        if (key !== 'writeFile' && key !== 'sync') return typeof value === 'function' ? value.bind(target) : value;
        return async (...a: unknown[]) => {
          const failed = failure(key);
          if (failed) throw failed;
          return (value as (...b: unknown[]) => unknown).apply(target, a);
        };
      },
    });
  };
  const rename: typeof real.rename = async (...args) => {
    const failed = failure('rename');
    if (failed) throw failed;
    return real.rename(...args);
  };
  const readFile = (async (...args: Parameters<typeof real.readFile>) => {
    const failed = failure('readFile');
    if (failed) throw failed;
    return real.readFile(...args);
  }) as typeof real.readFile;
  return { ...real, default: { ...real, open, rename, readFile }, open, rename, readFile };
});

const { createFsPayloadStore } = await import('../../../src/payloads/fs-payload-store.js');
const { PayloadStoreUnavailableError, payloadRefOf } = await import('../../../src/payloads/payload-store.js');

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'tapedeck-fs-faults-'));
  fault.code = null;
});
afterEach(async () => {
  fault.code = null;
  await rm(dir, { recursive: true, force: true });
});

/** Every file under dir, relative to it. */
async function filesUnder(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => path.relative(root, path.join(e.parentPath, e.name)));
}

const CODES = ['EIO', 'EACCES', 'EPERM', 'ENOSPC', 'EDQUOT', 'EROFS'];
const STEPS = ['open', 'writeFile', 'sync', 'rename'];

describe('filesystem payload store faults', () => {
  const bytes = new TextEncoder().encode('[{"content":"a prompt long enough to offload","role":"user"}]');

  it.each(CODES.flatMap((code) => STEPS.map((at) => [code, at])))(
    'a put failing with %s at %s is unavailable and leaves no file; the retry stores it',
    async (code, at) => {
      const store = createFsPayloadStore({ dir });
      fault.code = code;
      fault.at = at;
      const failed = await store.put(bytes).catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(PayloadStoreUnavailableError);
      expect((failed as Error).message).toContain(`(${code})`);
      fault.code = null;
      expect(await filesUnder(dir)).toEqual([]);
      expect(await store.has(payloadRefOf(bytes))).toBe(false);

      const ref = await store.put(bytes);
      expect(Buffer.from((await store.get(ref)) as Uint8Array).equals(Buffer.from(bytes))).toBe(true);
    },
  );

  it.each(CODES)('a read failing with %s is unavailable, not a missing payload', async (code) => {
    const store = createFsPayloadStore({ dir });
    const ref = await store.put(bytes);
    fault.code = code;
    fault.at = 'readFile';
    const failed = await store.get(ref).catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(PayloadStoreUnavailableError);
    expect((failed as Error).message).toContain(`(${code})`);
  });
});
