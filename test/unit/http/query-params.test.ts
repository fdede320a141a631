/** Query-string values read one way on every route (src/http/query-params.ts). */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/errors.js';
import { parseBoolean, parseLimit } from '../../../src/http/query-params.js';

function refusal(read: () => unknown): [string, string] | undefined {
  try {
    read();
  } catch (error) {
    if (error instanceof ApiError) return [error.type, error.message];
    throw error;
  }
  return undefined;
}

describe('parseBoolean', () => {
  it.each([
    [undefined, false],
    ['', false],
    ['false', false],
    ['0', false],
    ['true', true],
    ['1', true],
  ])('reads %j as %s', (value, expected) => {
    expect(parseBoolean(value, 'resolve')).toBe(expected);
  });

  it('refuses anything else as bad_input naming the parameter and the value', () => {
    expect(refusal(() => parseBoolean('yes', 'resolve'))).toEqual([
      'bad_input',
      'resolve must be true or false, got "yes"',
    ]);
  });
});

describe('parseLimit', () => {
  const bounds = { fallback: 50, min: 1, max: 1000 };

  it('reads a whole number within its bounds, and the fallback when absent', () => {
    expect([parseLimit(undefined, 'limit', bounds), parseLimit('', 'limit', bounds)]).toEqual([50, 50]);
    expect([parseLimit('1', 'limit', bounds), parseLimit('1000', 'limit', bounds)]).toEqual([1, 1000]);
    expect(parseLimit('0', 'max_depth', { fallback: 8, min: 0, max: 64 })).toBe(0);
  });

  it.each(['0', '1001', '-1', '2.5', '1e3', ' 5', 'ten'])('refuses %j as bad_input naming the bounds', (value) => {
    expect(refusal(() => parseLimit(value, 'limit', bounds))).toEqual([
      'bad_input',
      `limit must be a whole number from 1 to 1000, got ${JSON.stringify(value)}`,
    ]);
  });
});
