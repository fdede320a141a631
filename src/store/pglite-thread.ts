/**
 * @module store/pglite-thread
 * An on-disk PGlite in a worker thread (pglite-worker.ts), so that a statement whose deadline
 * passes can be stopped: the worker is terminated and a new one opens the directory again,
 * recovering it as PostgreSQL recovers after a crash (what was committed stays committed).
 * Callers take turns (statement-turns.ts), so at most one statement is in the worker at a time.
 * The worker keeps the process alive only while a statement is in it.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { packageRoot } from '../package-root.js';
import { DatabaseUnavailableError } from './database.js';
import type { PgliteReply, PgliteRequest } from './pglite-worker.js';

interface InFlight {
  resolve(rows: unknown[]): void;
  reject(error: unknown): void;
}

export class PgliteThread {
  /** bumped each time the worker is replaced: a transaction begun before is gone */
  generation = 0;
  private worker!: Worker;
  private ready!: Promise<void>;
  private inFlight: InFlight | null = null;
  private nextId = 1;

  private constructor(
    private readonly script: string,
    private readonly dataDir: string,
  ) {}

  /** Opens dataDir in a worker; null when the worker script is not built (run in-process). */
  static async open(dataDir: string): Promise<PgliteThread | null> {
    const script = workerScript();
    if (!script) return null;
    const thread = new PgliteThread(script, dataDir);
    thread.ready = thread.start();
    await thread.ready;
    return thread;
  }

  /** Runs one request; when signal aborts while it runs, the worker is replaced. */
  async call(op: PgliteRequest['op'], sql?: string, params?: readonly unknown[], signal?: AbortSignal) {
    await this.ready;
    signal?.throwIfAborted();
    const id = this.nextId++;
    const worker = this.worker;
    return new Promise<unknown[]>((resolve, reject) => {
      const onAbort = () => this.replace(signal?.reason);
      const settle = () => {
        signal?.removeEventListener('abort', onAbort);
        this.inFlight = null;
        worker.unref();
      };
      this.inFlight = {
        resolve: (rows) => {
          settle();
          resolve(rows);
        },
        reject: (error) => {
          settle();
          reject(error);
        },
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.ref();
      worker.postMessage({ id, op, sql, params: params as unknown[] | undefined } satisfies PgliteRequest);
    });
  }

  async close(): Promise<void> {
    this.closing = true;
    try {
      await this.call('close');
    } finally {
      await this.worker.terminate();
    }
  }

  private closing = false;

  private start(): Promise<void> {
    const worker = new Worker(this.script, { workerData: { dataDir: this.dataDir } });
    this.worker = worker;
    const ready = new Promise<void>((resolve, reject) => {
      worker.on('message', (message: { ready: true } | PgliteReply) => {
        if ('ready' in message) {
          worker.unref();
          resolve();
        } else if ('error' in message) {
          this.inFlight?.reject(Object.assign(new Error(message.error.message), message.error));
        } else this.inFlight?.resolve(message.rows);
      });
      worker.on('error', (error) => {
        reject(error);
        this.inFlight?.reject(new DatabaseUnavailableError(`PGlite (${this.dataDir}) failed`, { cause: error }));
      });
      worker.on('exit', () => {
        if (this.worker !== worker || this.replacing || this.closing) return;
        // stopped on its own (out of memory, say): the next call opens the directory again
        const error = new DatabaseUnavailableError(`PGlite (${this.dataDir}) stopped`);
        reject(error);
        this.inFlight?.reject(error);
        this.generation++;
        this.ready = this.start();
      });
    });
    // a failed start is reported to the caller that awaits it
    ready.catch(() => {});
    return ready;
  }

  private replacing = false;

  /**
   * Terminates the worker running the aborted statement, then opens the directory again in a
   * new one (never two at once on one directory); calls meanwhile wait for it.
   */
  private replace(reason: unknown): void {
    const old = this.worker;
    this.generation++;
    this.replacing = true;
    this.inFlight?.reject(reason);
    this.ready = old.terminate().then(() => {
      this.replacing = false;
      return this.start();
    });
    this.ready.catch(() => {});
  }
}

/** The built worker script: beside this module under dist/, else in the package's dist/. */
function workerScript(): string | null {
  const here = fileURLToPath(import.meta.url);
  const beside = path.join(path.dirname(here), 'pglite-worker.js');
  if (here.endsWith('.js') && existsSync(beside)) return beside;
  const built = path.join(packageRoot(), 'dist', 'src', 'store', 'pglite-worker.js');
  return existsSync(built) ? built : null;
}
