/**
 * Test databases. Every store test runs against embedded PGlite, and also against the real
 * PostgreSQL server named by TAPEDECK_TEST_DATABASE_URL when it is set (CI sets it). Each
 * test database is created fresh and dropped afterwards. Under CI=true a missing URL fails
 * the run instead of silently testing less.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Database } from '../../src/store/database.js';
import { createPgDatabase } from '../../src/store/pg-database.js';
import { createPgliteDatabase } from '../../src/store/pglite-database.js';
import { migrate } from '../../src/store/migrate.js';

export type DatabaseKind = 'pglite' | 'postgres';

export const defaultServerUrl = process.env.TAPEDECK_TEST_DATABASE_URL || undefined;

if (process.env.CI === 'true' && !defaultServerUrl) {
  throw new Error(
    'CI=true but TAPEDECK_TEST_DATABASE_URL is not set: the store tests must run against PostgreSQL in CI',
  );
}

/** The adapters this run tests: always PGlite, PostgreSQL when a server is configured. */
export const databaseKinds: DatabaseKind[] = defaultServerUrl ? ['pglite', 'postgres'] : ['pglite'];

export interface TestDatabase {
  db: Database;
  kind: DatabaseKind;
  /** connection URL of the fresh server database (postgres only) */
  url?: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database of the given kind. */
export async function createTestDatabase(
  kind: DatabaseKind,
  options: { migrated?: boolean } = {},
): Promise<TestDatabase> {
  const migrated = options.migrated ?? true;
  if (kind === 'pglite') {
    const db = await createPgliteDatabase();
    if (migrated) await migrate(db);
    return { db, kind, drop: () => db.close() };
  }
  const { url, drop } = await createServerDatabase();
  const db = createPgDatabase(url, { maxConnections: 4 });
  if (migrated) await migrate(db);
  return {
    db,
    kind,
    url,
    async drop() {
      await db.close();
      await drop();
    },
  };
}

/**
 * Creates an empty database on the test server; drop() removes it. `serverUrl` defaults to
 * TAPEDECK_TEST_DATABASE_URL (tests of this helper pass an unreachable one).
 */
export async function createServerDatabase(
  options: { serverUrl?: string } = {},
): Promise<{ url: string; drop(): Promise<void> }> {
  const serverUrl = options.serverUrl ?? defaultServerUrl;
  if (!serverUrl) throw new Error('TAPEDECK_TEST_DATABASE_URL is not set');
  const name = `tapedeck_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect().catch((error: Error) => {
    throw new Error(`cannot reach the test PostgreSQL server at TAPEDECK_TEST_DATABASE_URL: ${error.message}`);
  });
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
