/**
 * @module store/data-dir-in-use
 * What the embedded database directory's locks (data-dir-lock.ts, pid-lock.ts) answer, and the
 * two small file helpers they share.
 */
import { unlinkSync } from 'node:fs';

export class DataDirInUseError extends Error {
  constructor(
    readonly dir: string,
    readonly owner: string,
  ) {
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

/** Removes a file that may already be gone. */
export function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** fn, run on the first call only: a lock is released once. */
export function once(fn: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    fn();
  };
}
