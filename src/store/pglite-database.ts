/**
 * @module store/pglite-database
 * Database port over embedded PGlite (PostgreSQL compiled to WASM), the zero-setup default.
 * PGlite runs one query at a time and `transaction` holds it for the whole transaction; the
 * callers take turns in statement-turns.ts, where a statement whose signal aborts while it
 * waits leaves the line. An on-disk database runs in a worker thread (pglite-thread.ts), so a
 * statement whose signal aborts while it runs is stopped too. An in-memory one (tests) runs on
 * this thread, where a statement it has started runs to its end: stopping it would lose the
 * database.
 */
import { mkdirSync } from 'node:fs';
import { PGlite, types } from '@electric-sql/pglite';
import { type Database, DatabaseUnavailableError, isTransientSqlState } from './database.js';
import { lockDataDir } from './data-dir-lock.js';
import { PgliteThread } from './pglite-thread.js';
import { StatementTurns } from './statement-turns.js';

/** dataDir: a directory for a persistent database, or undefined for an in-memory one (tests). */
export async function createPgliteDatabase(dataDir?: string): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Two processes writing one directory corrupt it; PGlite does not stop the second.
  const lock = dataDir ? await lockDataDir(dataDir) : undefined;
  if (dataDir) {
    let thread: PgliteThread | null;
    try {
      thread = await PgliteThread.open(dataDir);
    } catch (error) {
      lock?.release();
      throw translate(error, dataDir);
    }
    if (thread) return threaded(thread, dataDir, lock);
  }
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir, {
      parsers: { [types.INT8]: (value: string) => BigInt(value) },
    });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const where = dataDir ?? 'memory';
  const query = async <Row>(
    runner: Pick<PGlite, 'query'>,
    sql: string,
    params?: readonly unknown[],
  ): Promise<Row[]> => {
    try {
      const result = await runner.query<Row>(sql, params as unknown[] | undefined);
      return result.rows;
    } catch (error) {
      throw translate(error, where);
    }
  };
  const turns = new StatementTurns();
  return {
    kind: 'pglite',
    query: (sql, params, options) => turns.run(() => query(db, sql, params), options?.signal),
    exec: async (sql) => {
      await turns
        .run(() => db.exec(sql))
        .catch((error: unknown) => {
          throw translate(error, where);
        });
    },
    transaction: (fn) =>
      turns
        .run(() =>
          db.transaction((tx) =>
            fn({
              query: (sql, params, options) => {
                options?.signal?.throwIfAborted();
                return query(tx, sql, params);
              },
              exec: async (sql) => {
                await tx.exec(sql).catch((error: unknown) => {
                  throw translate(error, where);
                });
              },
            }),
          ),
        )
        .catch((error: unknown) => {
          throw translate(error, where);
        }),
    async ping() {
      await turns.run(() => db.query('SELECT 1'));
    },
    async close() {
      try {
        if (!db.closed) await db.close();
      } finally {
        lock?.release();
      }
    },
  };
}

/** The port over a PGlite in a worker thread. */
function threaded(thread: PgliteThread, where: string, lock: { release(): void } | undefined): Database {
  const turns = new StatementTurns();
  const call = async (op: 'query' | 'exec', sql: string, params?: readonly unknown[], signal?: AbortSignal) => {
    try {
      return await thread.call(op, sql, params, signal);
    } catch (error) {
      throw signal?.aborted && error === signal.reason ? error : translate(error, where);
    }
  };
  const query = <Row>(sql: string, params?: readonly unknown[], signal?: AbortSignal) =>
    call('query', sql, params, signal) as Promise<Row[]>;
  const exec = async (sql: string) => {
    await call('exec', sql);
  };
  return {
    kind: 'pglite',
    query: (sql, params, options) => turns.run(() => query(sql, params, options?.signal), options?.signal),
    exec: (sql) => turns.run(() => exec(sql)),
    transaction: (fn) =>
      turns.run(async () => {
        const generation = thread.generation;
        await exec('BEGIN');
        try {
          const result = await fn({ query: (sql, params, options) => query(sql, params, options?.signal), exec });
          await exec('COMMIT');
          return result;
        } catch (error) {
          // a worker replaced meanwhile took the transaction with it
          if (thread.generation === generation) await exec('ROLLBACK').catch(() => {});
          throw error;
        }
      }),
    async ping() {
      await turns.run(() => query('SELECT 1'));
    },
    async close() {
      try {
        await turns.run(() => thread.close());
      } finally {
        lock?.release();
      }
    },
  };
}

/**
 * The same classes of fault as a PostgreSQL server's (database.ts isTransientSqlState: a full
 * disk is 53100, too many locks 53200), plus the file system's own under PGlite's data
 * directory, are unavailable: a retry may succeed. Anything else is left as it is.
 */
function translate(error: unknown, where: string): unknown {
  if (error instanceof DatabaseUnavailableError) return error;
  const code = (error as { code?: unknown } | null)?.code;
  if (isTransientSqlState(code) || (typeof code === 'string' && FILE_SYSTEM_FAULTS.has(code))) {
    return new DatabaseUnavailableError(`PGlite (${where}) is unavailable: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return error;
}

const FILE_SYSTEM_FAULTS = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EACCES', 'EPERM', 'EROFS', 'EMFILE', 'ENFILE']);
