/**
 * @module store/migrate
 * Ordered SQL migrations (src/tapes/migrations/NNNN_name.sql), applied at start-up in one
 * transaction (all or none) with no statement or query timeout, recorded in
 * tapedeck_store.schema_migrations. An advisory lock makes concurrent starts (several
 * receivers on one database) apply each migration once: the others wait for it, untimed too.
 * A database that has a migration this code does not know refuses to start.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Database } from './database.js';
import { packageRoot } from '../package-root.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** An arbitrary constant: the advisory lock key every tapedeck process agrees on. */
const MIGRATION_LOCK_KEY = 7_467_100_001;

export class SchemaTooNewError extends Error {
  constructor(
    readonly databaseVersion: number,
    readonly codeVersion: number,
  ) {
    super(
      `the database schema is at migration ${databaseVersion}, but this tapedeck knows migrations up to ${codeVersion}: ` +
        'it was written by a newer tapedeck. Upgrade tapedeck, or point it at another database.',
    );
    this.name = 'SchemaTooNewError';
  }
}

export function loadMigrations(dir = path.join(packageRoot(), 'src', 'tapes', 'migrations')): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return files.map((file, i) => {
    const version = Number(file.slice(0, 4));
    if (version !== i + 1) throw new Error(`migration ${file} is out of sequence: expected number ${i + 1}`);
    return { version, name: file.slice(5, -4), sql: readFileSync(path.join(dir, file), 'utf8') };
  });
}

/** Applies what is missing; returns the versions applied now. */
export async function migrate(db: Database, migrations: Migration[] = loadMigrations()): Promise<number[]> {
  const latest = migrations.length ? migrations[migrations.length - 1].version : 0;
  // Untimed: a rewrite of a large table, or waiting while another replica migrates, may take
  // longer than any query timeout meant for ingest and reads.
  return db.transaction(
    async (tx) => {
      await tx.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_KEY]);
      await tx.exec(`
      CREATE SCHEMA IF NOT EXISTS tapedeck_store;
      CREATE TABLE IF NOT EXISTS tapedeck_store.schema_migrations (
        version integer PRIMARY KEY,
        name text NOT NULL,
        applied_at timestamptz NOT NULL DEFAULT now()
      );`);
      const rows = await tx.query<{ version: number }>(
        'SELECT version FROM tapedeck_store.schema_migrations ORDER BY version',
      );
      const applied = new Set(rows.map((r) => Number(r.version)));
      const newest = Math.max(0, ...applied);
      if (newest > latest) throw new SchemaTooNewError(newest, latest);
      const done: number[] = [];
      for (const m of migrations) {
        if (applied.has(m.version)) continue;
        await tx.exec(m.sql);
        await tx.query('INSERT INTO tapedeck_store.schema_migrations (version, name) VALUES ($1, $2)', [
          m.version,
          m.name,
        ]);
        done.push(m.version);
      }
      return done;
    },
    { untimed: true },
  );
}

/** For /readyz: true when every migration this code knows is applied. */
export async function isSchemaCurrent(db: Database, migrations: Migration[] = loadMigrations()): Promise<boolean> {
  const latest = migrations.length ? migrations[migrations.length - 1].version : 0;
  try {
    const rows = await db.query<{ v: number | null }>('SELECT max(version) AS v FROM tapedeck_store.schema_migrations');
    return Number(rows[0]?.v ?? 0) === latest;
  } catch {
    return false;
  }
}
