/**
 * The store suites run on both database kinds, and under CI=true a missing or
 * unreachable PostgreSQL server fails the run instead of quietly testing less.
 *
 * Scope: test/helpers/databases.ts, which every store suite (and startTestTapedeck) takes
 * its databases from. It is loaded afresh here under stubbed environments, as a suite would
 * load it in CI.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createServerDatabase, databaseKinds } from '../helpers/databases.js';

const UNREACHABLE = 'postgres://postgres@127.0.0.1:1/test';

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('the test databases', () => {
  it('always include PGlite, and the PostgreSQL server when TAPEDECK_TEST_DATABASE_URL is set', () => {
    expect(databaseKinds[0]).toBe('pglite');
    expect(databaseKinds.includes('postgres')).toBe(Boolean(process.env.TAPEDECK_TEST_DATABASE_URL));
  });

  it('refuse to load under CI=true without TAPEDECK_TEST_DATABASE_URL, failing every suite that uses them', async () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('TAPEDECK_TEST_DATABASE_URL', '');
    vi.resetModules();
    await expect(import('../helpers/databases.js')).rejects.toThrow(
      'CI=true but TAPEDECK_TEST_DATABASE_URL is not set: the store tests must run against PostgreSQL in CI',
    );
  });

  it('reject, naming TAPEDECK_TEST_DATABASE_URL, when the server cannot be reached', async () => {
    await expect(createServerDatabase({ serverUrl: UNREACHABLE })).rejects.toThrow(
      /^cannot reach the test PostgreSQL server at TAPEDECK_TEST_DATABASE_URL: .*ECONNREFUSED/,
    );
  });

  it('under CI=true with an unreachable server, include PostgreSQL and fail its set-up instead of skipping it', async () => {
    vi.stubEnv('CI', 'true');
    vi.stubEnv('TAPEDECK_TEST_DATABASE_URL', UNREACHABLE);
    vi.resetModules();
    const fresh = await import('../helpers/databases.js');
    expect(fresh.databaseKinds).toEqual(['pglite', 'postgres']);
    await expect(fresh.createTestDatabase('postgres')).rejects.toThrow(
      /cannot reach the test PostgreSQL server at TAPEDECK_TEST_DATABASE_URL/,
    );
  });
});
