import { describe, expect, it } from 'vitest';
import { parseTimeBound, TimeBoundError } from '../../../src/runs/time-bound.js';
import { datasetFilterOf, DatasetFilterError } from '../../../src/runs/dataset-filter.js';

describe('parseTimeBound', () => {
  it('reads Unix nanoseconds exactly and ISO 8601 dates and times as UTC', () => {
    expect(parseTimeBound('since', '1764493200123456789')).toBe(1764493200123456789n);
    expect(parseTimeBound('since', '2025-11-30')).toBe(1764460800000000000n);
    expect(parseTimeBound('since', '2025-11-30T09:00:00Z')).toBe(1764493200000000000n);
    expect(parseTimeBound('since', '2025-11-30T09:00:00')).toBe(1764493200000000000n);
    expect(parseTimeBound('since', '2025-11-30T10:00:00+01:00')).toBe(1764493200000000000n);
    expect(parseTimeBound('since', '2025-11-30T09:00:00.123456789Z')).toBe(1764493200123456789n);
  });

  it('names the flag and the accepted forms when it cannot read the time', () => {
    expect(() => parseTimeBound('--since', 'yesterday')).toThrow(TimeBoundError);
    expect(() => parseTimeBound('--since', 'yesterday')).toThrow(/--since must be an ISO 8601 time/);
    expect(() => parseTimeBound('--until', '2025-13-45')).toThrow(/not a valid date/);
  });
});

describe('datasetFilterOf', () => {
  it('defaults to successful runs with no time bounds', () => {
    expect(datasetFilterOf({})).toEqual({ since: null, until: null, outcome: 'success', mergeUserTurns: false });
    expect(datasetFilterOf({ outcome: 'any', since: '1', until: '2', mergeUserTurns: true })).toEqual({
      since: 1n,
      until: 2n,
      outcome: 'any',
      mergeUserTurns: true,
    });
  });

  it('refuses an unknown outcome and an empty window', () => {
    expect(() => datasetFilterOf({ outcome: 'done' })).toThrow(DatasetFilterError);
    expect(() => datasetFilterOf({ since: '2025-12-01', until: '2025-11-01' })).toThrow(/since must be before until/);
  });
});
