/**
 * @module store/pglite-database
 * Database port over embedded PGlite (PostgreSQL compiled to WASM), the zero-setup default.
 * PGlite runs one query at a time and `transaction` holds it for the whole transaction; the
 * callers take turns in statement-turns.ts, where a statement whose signal aborts while it
 * waits leaves the line (one PGlite has started runs to its end).
 */
import { mkdirSync } from 'node:fs';
import { PGlite, types } from '@electric-sql/pglite';
import { type Database, DatabaseUnavailableError, isTransientSqlState } from './database.js';
import { lockDataDir } from './data-dir-lock.js';
import { StatementTurns } from './statement-turns.js';

/** dataDir: a directory for a persistent database, or undefined for an in-memory one (tests). */
export async function createPgliteDatabase(dataDir?: string): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Two processes writing one directory corrupt it; PGlite does not stop the second.
  const lock = dataDir ? await lockDataDir(dataDir) : undefined;
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
