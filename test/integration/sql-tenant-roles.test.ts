/**
 * Tenant-scoped SQL (docs/sql.md, "One tenant's view"): a database role named in
 * tapedeck_store.tenant_roles reads only its tenant's rows through the public views, while
 * tapedeck's own role (the tables' owner) and unmapped roles read every tenant.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { insertSyntheticRuns } from '../../bench/lib/synthetic-runs.mjs';

const NOW_NS = 1_900_000_000_000_000_000n;

describe.each(databaseKinds)('tenant roles on %s', (kind) => {
  let t: TestDatabase;
  const suffix = randomBytes(4).toString('hex');
  const acmeRole = `tapedeck_acme_${suffix}`;
  const opsRole = `tapedeck_ops_${suffix}`;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
    await insertSyntheticRuns(t.db, 'acme', 0, 1, NOW_NS);
    await insertSyntheticRuns(t.db, 'globex', 2, 3, NOW_NS);
    for (const role of [acmeRole, opsRole]) {
      await t.db.exec(`CREATE ROLE ${role} NOLOGIN;
        GRANT USAGE ON SCHEMA tapedeck, tapedeck_store TO ${role};
        GRANT SELECT ON ALL TABLES IN SCHEMA tapedeck TO ${role};
        GRANT SELECT ON ALL TABLES IN SCHEMA tapedeck_store TO ${role};`);
    }
    await t.db.query('INSERT INTO tapedeck_store.tenant_roles (role_name, tenant) VALUES ($1, $2)', [acmeRole, 'acme']);
  }, 60_000);
  afterAll(async () => {
    if (!t) return;
    for (const role of [acmeRole, opsRole]) {
      await t.db.exec(`DROP OWNED BY ${role}; DROP ROLE ${role};`).catch(() => {});
    }
    await t.drop();
  });

  async function tenantsSeenAs(role: string | null, view: string): Promise<string[]> {
    return t.db.transaction(async (tx) => {
      if (role) await tx.exec(`SET LOCAL ROLE ${role}`);
      const rows = await tx.query<{ tenant: string | null }>(`SELECT DISTINCT tenant FROM tapedeck.${view} ORDER BY 1`);
      return rows.map((r) => r.tenant ?? '');
    });
  }

  it.each(['spans', 'tape_steps', 'step_messages', 'runs'])(
    'a tenant role reads only its tenant in tapedeck.%s',
    async (view) => {
      expect(await tenantsSeenAs(acmeRole, view)).toEqual(['acme']);
      expect(await tenantsSeenAs(opsRole, view)).toEqual(['acme', 'globex']);
      expect(await tenantsSeenAs(null, view)).toEqual(['acme', 'globex']);
    },
  );

  it('a tenant role cannot widen its view by reading the tables or naming another tenant', async () => {
    const rows = await t.db.transaction(async (tx) => {
      await tx.exec(`SET LOCAL ROLE ${acmeRole}`);
      return tx.query<{ tenant: string }>(`SELECT DISTINCT tenant FROM tapedeck_store.spans WHERE tenant = 'globex'`);
    });
    expect(rows).toEqual([]);
  });
});
