/** The names prepared statements go by: one per text, alike everywhere, and a bound on how many. */
import { describe, expect, it } from 'vitest';
import { createStatementNames } from '../../../src/store/pg-prepared.js';
import { ConfigError, loadConfig } from '../../../src/config.js';

describe('prepared statement names', () => {
  it('name a text alike every time and in every process, and two texts apart, within an identifier', () => {
    const names = createStatementNames();
    const a = names('SELECT $1::int');
    expect(a).toMatch(/^tapedeck_[0-9a-f]{32}$/);
    expect(Buffer.byteLength(a as string)).toBeLessThanOrEqual(63);
    expect(names('SELECT $1::int')).toBe(a);
    expect(createStatementNames()('SELECT $1::int')).toBe(a);
    expect(names('SELECT $1::bigint')).not.toBe(a);
  });

  it('prepare at most the bound, after which a new text runs unprepared and a named one keeps its name', () => {
    const names = createStatementNames(2);
    const first = names('SELECT 1');
    expect(names('SELECT 2')).not.toBeNull();
    expect(names('SELECT 3')).toBeNull();
    expect(names('SELECT 1')).toBe(first);
  });
});

describe('--database-prepared-statements', () => {
  it('is on by default, off when set so, and refuses anything else by name', () => {
    expect(loadConfig({}, {}).databasePreparedStatements).toBe(true);
    expect(loadConfig({ TAPEDECK_DATABASE_PREPARED_STATEMENTS: 'off' }, {}).databasePreparedStatements).toBe(false);
    expect(loadConfig({}, { databasePreparedStatements: 'off' }).databasePreparedStatements).toBe(false);
    expect(() => loadConfig({ TAPEDECK_DATABASE_PREPARED_STATEMENTS: 'sometimes' }, {})).toThrow(ConfigError);
    expect(() => loadConfig({ TAPEDECK_DATABASE_PREPARED_STATEMENTS: 'sometimes' }, {})).toThrow(
      'TAPEDECK_DATABASE_PREPARED_STATEMENTS',
    );
  });
});
