import { describe, expect, it } from 'vitest';
import { ACTIVE_WINDOW_NS, runOutcome } from '../../../src/tapes/run-outcome.js';

const NOW = 1_800_000_000_000_000_000n;
const HOUR = 3_600_000_000_000n;
const MINUTE = 60_000_000_000n;

describe('runOutcome', () => {
  it('is unknown for a cut read, a run not read, or a run active in the last 15 minutes, whatever its spans say', () => {
    expect(runOutcome({ lastEndNs: NOW - HOUR, failed: false }, true, NOW)).toBe('unknown');
    expect(runOutcome(null, false, NOW)).toBe('unknown');
    expect(runOutcome({ lastEndNs: NOW - 14n * MINUTE, failed: true }, false, NOW)).toBe('unknown');
    expect(runOutcome({ lastEndNs: NOW - 16n * MINUTE, failed: false }, false, NOW)).toBe('success');
    expect(runOutcome({ lastEndNs: NOW - HOUR, failed: true }, false, NOW)).toBe('failure');
  });

  it('counts a run whose last span ended exactly ACTIVE_WINDOW_NS ago as over', () => {
    expect(runOutcome({ lastEndNs: NOW - ACTIVE_WINDOW_NS, failed: false }, false, NOW)).toBe('success');
    expect(runOutcome({ lastEndNs: NOW - ACTIVE_WINDOW_NS + 1n, failed: false }, false, NOW)).toBe('unknown');
  });
});
