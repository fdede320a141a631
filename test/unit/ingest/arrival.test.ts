/**
 * A request's arrival time: wall-clock microseconds, strictly increasing within the process.
 */
import { describe, expect, it } from 'vitest';
import { arrivalTime } from '../../../src/ingest/arrival.js';

const micros = (t: string) => {
  const match = /^(.*)\.(\d{6})Z$/.exec(t);
  if (!match) throw new Error(`not an ISO time with microseconds: ${t}`);
  return Date.parse(`${match[1]}Z`) * 1000 + Number(match[2]);
};

describe('arrivalTime', () => {
  it('is the wall clock, to the microsecond, as an ISO 8601 UTC time', () => {
    const before = Date.now();
    const t = arrivalTime();
    const after = Date.now();
    expect(t).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
    expect(Math.floor(micros(t) / 1000)).toBeGreaterThanOrEqual(before);
    expect(Math.floor(micros(t) / 1000)).toBeLessThanOrEqual(after + 1);
  });

  it('never repeats or goes back, even for many arrivals in one millisecond', () => {
    const times = Array.from({ length: 5000 }, arrivalTime);
    for (let i = 1; i < times.length; i++) expect(micros(times[i])).toBeGreaterThan(micros(times[i - 1]));
  });
});
