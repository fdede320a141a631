/**
 * @module cassettes/catalog
 * The store's catalog of imported cassettes: one row per cassette, and only an index. Every
 * column but the import time is read from the cassette file alone (its manifest, its size, and
 * the ids its runs were stored under, which importing the same file again recomputes), so the
 * catalog can be dropped and rebuilt by importing the files again (its table: migration
 * 0015_cassette_catalog.sql).
 */
import type { Queryable } from '../store/database.js';
import type { LoadedCassette } from './load.js';

export interface CatalogRow {
  id: string;
  name: string;
  manifest_sha256: string;
  schema_version: number;
  created_at: string;
  root_run: string;
  /** each recorded run id and the id it is stored under here */
  runs: { run: string; stored_as: string }[];
  size_bytes: number;
}

export function catalogRowOf(c: LoadedCassette, storedAs: ReadonlyMap<string, string>): CatalogRow {
  const m = c.manifest;
  return {
    id: m.id,
    name: m.name,
    manifest_sha256: m.manifest_sha256,
    schema_version: m.schema_version,
    created_at: m.created_at,
    root_run: m.root_run,
    runs: m.runs.map((r) => ({ run: r.run, stored_as: storedAs.get(r.run) ?? r.run })),
    size_bytes: c.sizeBytes,
  };
}

/** Writes the row (a renamed cassette imported again updates its name and manifest hash). */
export async function upsertCatalogRow(tx: Queryable, tenant: string, row: CatalogRow): Promise<void> {
  await tx.query(
    `INSERT INTO tapedeck_store.cassettes
       (tenant, id, name, manifest_sha256, schema_version, created_at, root_run, runs, size_bytes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8::jsonb, $9)
     ON CONFLICT (tenant, id) DO UPDATE SET name = EXCLUDED.name, manifest_sha256 = EXCLUDED.manifest_sha256,
       size_bytes = EXCLUDED.size_bytes, runs = EXCLUDED.runs`,
    [
      tenant,
      row.id,
      row.name,
      row.manifest_sha256,
      row.schema_version,
      row.created_at,
      row.root_run,
      JSON.stringify(row.runs),
      row.size_bytes,
    ],
  );
}

export async function readCatalogRow(db: Queryable, tenant: string, id: string): Promise<CatalogRow | undefined> {
  const [row] = await db.query<Record<string, unknown>>(
    `SELECT id, name, manifest_sha256, schema_version, created_at, root_run, runs, size_bytes
       FROM tapedeck_store.cassettes WHERE tenant = $1 AND id = $2`,
    [tenant, id],
  );
  if (!row) return undefined;
  return {
    ...(row as unknown as CatalogRow),
    size_bytes: Number(row.size_bytes),
    schema_version: Number(row.schema_version),
  };
}
