/**
 * Credentials minted at runtime and the audit log, on PGlite and PostgreSQL: a minted token
 * authenticates until it is revoked, only its digest is stored, and minting and revoking
 * each leave one audit row naming who did it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accessFor } from '../../src/auth/access.js';
import { recordAudit } from '../../src/auth/audit.js';
import { parseTokenEntries } from '../../src/auth/credential.js';
import { openCredentials } from '../../src/auth/credentials.js';
import { silentLogger } from '../../src/logger.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

const configured = parseTokenEntries('ops:ops-secret-0123456789:admin', 'TAPEDECK_TOKENS');
const admin = accessFor(configured[0].credential);

describe.each(databaseKinds)('credentials on %s', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
  }, 60_000);
  afterAll(async () => t?.drop());

  it('is open with no credential of either kind, and closed once one exists', async () => {
    const none = await openCredentials(t.db, [], silentLogger());
    expect(none.open).toBe(true);
    const withTokens = await openCredentials(t.db, configured, silentLogger());
    expect(withTokens.open).toBe(false);
    expect(await withTokens.authenticate('ops-secret-0123456789')).toMatchObject({ name: 'ops', role: 'admin' });
    expect(await withTokens.authenticate('ops-secret-012345678')).toBeUndefined();
  });

  it('mints a credential that authenticates until revoked, storing only a digest and auditing both', async () => {
    const credentials = await openCredentials(t.db, configured, silentLogger());
    const { credential, token } = await credentials.mint({ name: 'ci', role: 'rw', tenant: 'acme' }, admin);
    expect(credential).toMatchObject({ name: 'ci', role: 'rw', tenant: 'acme', created_by: 'ops', revoked_at: null });
    expect(token).toMatch(/^tdk_[A-Za-z0-9_-]{43}$/);
    expect(await credentials.authenticate(token)).toMatchObject({
      name: 'ci',
      role: 'rw',
      tenant: 'acme',
      source: 'minted',
    });

    const stored = await t.db.query<Record<string, unknown>>('SELECT * FROM tapedeck_store.credentials');
    expect(JSON.stringify(stored, (_k, v) => (typeof v === 'bigint' ? String(v) : v))).not.toContain(token);

    // a later server on the same database is not open: a minted credential exists
    expect((await openCredentials(t.db, [], silentLogger())).open).toBe(false);

    expect(await credentials.revoke(credential.id, admin)).toMatchObject({ id: credential.id });
    expect(await credentials.authenticate(token)).toBeUndefined();
    expect(await credentials.revoke(credential.id, admin)).toBeUndefined();

    const audit = await t.db.query<{
      action: string;
      actor: string;
      actor_role: string;
      tenant: string;
      subject: Record<string, unknown>;
    }>(
      `SELECT action, actor, actor_role, tenant, subject FROM tapedeck.audit_log WHERE action LIKE 'credential.%' ORDER BY id`,
    );
    expect(audit).toEqual([
      {
        action: 'credential.mint',
        actor: 'ops',
        actor_role: 'admin',
        tenant: 'acme',
        subject: { credential: credential.id, name: 'ci', role: 'rw' },
      },
      {
        action: 'credential.revoke',
        actor: 'ops',
        actor_role: 'admin',
        tenant: 'acme',
        subject: { credential: credential.id, name: 'ci' },
      },
    ]);
  });

  it('records an audit entry inside the caller transaction, so a rolled-back change leaves none', async () => {
    await expect(
      t.db.transaction(async (tx) => {
        await recordAudit(tx, silentLogger(), {
          action: 'erasure.record',
          actor: admin,
          tenant: 'acme',
          subject: { run: 'r' },
        });
        throw new Error('the change failed');
      }),
    ).rejects.toThrow('the change failed');
    const rows = await t.db.query(`SELECT 1 FROM tapedeck.audit_log WHERE action = 'erasure.record'`);
    expect(rows).toHaveLength(0);
    const record = await recordAudit(t.db, silentLogger(), {
      action: 'retention.run',
      actor: 'system',
      tenant: null,
      detail: { spans: 3n },
    });
    const [row] = await t.db.query<{ actor: string; detail: unknown }>(
      'SELECT actor, detail FROM tapedeck.audit_log WHERE id = $1',
      [record.id],
    );
    expect(row).toEqual({ actor: 'system', detail: { spans: '3' } });
  });
});
