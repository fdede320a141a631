/**
 * A store as the version before a migration left it, for the tests of that migration: a
 * database migrated up to (not including) the migration named, and rows copied into it from
 * a store written now.
 */
import type { Queryable } from '../../src/store/database.js';
import { loadMigrations, migrate } from '../../src/store/migrate.js';
import { createTestDatabase, type DatabaseKind, type TestDatabase } from './databases.js';

/** The version of the migration named `name` (its file's name without number and extension). */
export function migrationVersion(name: string): number {
  const found = loadMigrations().find((m) => m.name === name);
  if (!found) throw new Error(`no migration named ${name}`);
  return found.version;
}

/** A new database with every migration before the one named `name` applied. */
export async function databaseBefore(kind: DatabaseKind, name: string): Promise<TestDatabase> {
  const db = await createTestDatabase(kind, { migrated: false });
  const version = migrationVersion(name);
  await migrate(
    db.db,
    loadMigrations().filter((m) => m.version < version),
  );
  return db;
}

/**
 * Inserts each row `select` gives (one column `j`, the row as JSON) into a table of `to`,
 * through json_populate_record: members the table has no column for are left out.
 */
export async function copyRows(from: Queryable, to: Queryable, table: string, select: string): Promise<void> {
  for (const r of await from.query<{ j: string }>(select))
    await to.query(
      `INSERT INTO tapedeck_store.${table} SELECT * FROM json_populate_record(NULL::tapedeck_store.${table}, $1::json)`,
      [r.j],
    );
}
