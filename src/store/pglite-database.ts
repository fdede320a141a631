/**
 * @module store/pglite-database
 * Database port over embedded PGlite (PostgreSQL compiled to WASM), the zero-setup default.
 * PGlite runs one query at a time; its own queue serialises callers, and `transaction`
 * holds that queue for the whole transaction.
 */
import { mkdirSync } from 'node:fs';
import { PGlite, types } from '@electric-sql/pglite';
import type { Database } from './database.js';
import { lockDataDir } from './data-dir-lock.js';

/** dataDir: a directory for a persistent database, or undefined for an in-memory one (tests). */
export async function createPgliteDatabase(dataDir?: string): Promise<Database> {
  if (dataDir) mkdirSync(dataDir, { recursive: true });
  // Two processes writing one directory corrupt it; PGlite does not stop the second.
  const lock = dataDir ? lockDataDir(dataDir) : undefined;
  let db: PGlite;
  try {
    db = await PGlite.create(dataDir, {
      parsers: { [types.INT8]: (value: string) => BigInt(value) },
    });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const query = async <Row>(
    runner: Pick<PGlite, 'query'>,
    sql: string,
    params?: readonly unknown[],
  ): Promise<Row[]> => {
    const result = await runner.query<Row>(sql, params as unknown[] | undefined);
    return result.rows;
  };
  return {
    kind: 'pglite',
    query: (sql, params) => query(db, sql, params),
    exec: async (sql) => {
      await db.exec(sql);
    },
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({
          query: (sql, params) => query(tx, sql, params),
          exec: async (sql) => {
            await tx.exec(sql);
          },
        }),
      ),
    async ping() {
      await db.query('SELECT 1');
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
