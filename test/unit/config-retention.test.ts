/** --retention and --retention-tenants: durations read exactly, anything else refused by name. */
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('retention settings', () => {
  it('reads days, hours and minutes, off, and per-tenant overrides', () => {
    const config = loadConfig(
      { TAPEDECK_RETENTION: '30d', TAPEDECK_RETENTION_TENANTS: 't1=7d, t2=12h,t3=off,=90m' },
      {},
    );
    expect(config.retentionMs).toBe(30 * 86_400_000);
    expect([...config.retentionTenants]).toEqual([
      ['t1', 7 * 86_400_000],
      ['t2', 12 * 3_600_000],
      ['t3', null],
      ['', 90 * 60_000],
    ]);
    expect(loadConfig({}, { retentionMs: 'off' }).retentionMs).toBeNull();
    expect(loadConfig({}, {}).retentionMs).toBeNull();
  });

  it('refuses a duration without a unit, a zero, or an entry without a tenant, naming the setting', () => {
    for (const [env, raw] of [
      ['TAPEDECK_RETENTION', '30'],
      ['TAPEDECK_RETENTION', '0d'],
      ['TAPEDECK_RETENTION', '2w'],
      ['TAPEDECK_RETENTION_TENANTS', 't1'],
      ['TAPEDECK_RETENTION_TENANTS', 't1=soon'],
    ]) {
      expect(() => loadConfig({ [env]: raw }, {})).toThrow(ConfigError);
      expect(() => loadConfig({ [env]: raw }, {})).toThrow(env);
    }
  });
});
