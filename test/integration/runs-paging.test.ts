/**
 * GET /v1/runs and `tapedeck runs` page with listRuns (src/tapes/run-reader.ts), which finds
 * a page's runs by walking spans newest first instead of sorting the tapedeck.runs view. It
 * must give the view's order exactly (last_end_ns DESC, run DESC), with ties in end times,
 * runs spread over several traces, runs inside runs and spans of no run, at every page size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import type { SpanRecord } from '../../src/spans/span-record.js';
import { openStore, type Store } from '../../src/open-store.js';
import { getRun, listRuns, type RunSummary } from '../../src/tapes/run-reader.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { span } from '../helpers/span-builder.js';

/** Deterministic pseudo-random numbers (xorshift32). */
function random(seed: number): () => number {
  let x = seed;
  return () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 0x1_0000_0000;
  };
}

/** 40 runs: 1-6 spans each over one or two traces; end times from a small set, so many tie. */
function storeShapes(): SpanRecord[] {
  const next = random(7);
  const pick = (n: number) => Math.floor(next() * n);
  const spans: SpanRecord[] = [];
  for (let r = 0; r < 40; r++) {
    const run = `run-${String.fromCharCode(97 + pick(26))}${r}`;
    const traces = [r, r + 1000].slice(0, 1 + pick(2)).map((t) => t.toString(16).padStart(32, 'c'));
    traces.forEach((traceId, t) => {
      const root = `r${r}t${t}`;
      const rootEnd = 1_000 + pick(12) * 100;
      spans.push(
        span({
          traceId,
          id: root,
          name: 'invoke_agent a',
          start: 0,
          end: rootEnd,
          attributes: { 'session.id': run },
          // every third run failed: its root span says so
          status: r % 3 === 0 ? 'error' : 'unset',
        }),
      );
      for (let c = 0; c < pick(5); c++) {
        // a child may end after its root (clock skew, async work): the run's last end is the max
        spans.push(
          span({
            traceId,
            id: `c${r}t${t}s${c}`,
            parent: root,
            name: 'chat gpt-4o',
            start: 10,
            end: 1_000 + pick(12) * 100,
          }),
        );
      }
      if (pick(4) === 0) {
        // a run inside the run: its own session, parent run from trace parentage
        spans.push(
          span({
            traceId,
            id: `n${r}t${t}`,
            parent: root,
            name: 'invoke_agent b',
            start: 20,
            end: 1_000 + pick(12) * 100,
            attributes: { 'session.id': `${run}-inner` },
          }),
        );
      }
    });
  }
  // spans of no run
  spans.push(span({ traceId: 'd'.repeat(32), id: 'lonely', name: 'GET /', start: 0, end: 99_999 }));
  return spans;
}

describe.each(databaseKinds)('runs paging on %s', (kind) => {
  let t: TestDatabase;
  let store: Store;
  let expected: string[];
  beforeAll(async () => {
    t = await createTestDatabase(kind, { migrated: false });
    store = await openStore(loadConfig({}), silentLogger(), { db: t.db, payloads: createMemoryPayloadStore() });
    const spans = storeShapes();
    // in two requests, children first
    await ingestSpans(spans.slice(spans.length >> 1), { tenant: '' }, store.ingest);
    await ingestSpans(spans.slice(0, spans.length >> 1), { tenant: '' }, store.ingest);
    const rows = await t.db.query<{ run: string }>(
      "SELECT run FROM tapedeck.runs WHERE tenant_key = '' ORDER BY last_end_ns DESC, run DESC",
    );
    expected = rows.map((r) => r.run);
  }, 60_000);
  afterAll(async () => {
    await t?.drop();
  });

  it.each([1, 3, 7, 100])("gives the view's order and summaries, %i runs a page", async (limit) => {
    expect(expected.length).toBeGreaterThan(45);
    const seen: RunSummary[] = [];
    let cursor: string | undefined;
    for (let pages = 0; pages < 100; pages++) {
      const page = await listRuns(t.db, '', { limit, cursor });
      expect(page.runs.length).toBeLessThanOrEqual(limit);
      seen.push(...page.runs);
      if (!page.next_cursor) break;
      cursor = page.next_cursor;
    }
    expect(seen.map((r) => r.run)).toEqual(expected);
    for (const summary of seen.slice(0, 5)) expect(summary).toEqual(await getRun(t.db, '', summary.run));
  });

  it.each(['failure', 'success'] as const)(
    "filtered to %s, gives the view's runs of that outcome in order",
    async (outcome) => {
      const rows = await t.db.query<{ run: string }>(
        "SELECT run FROM tapedeck.runs WHERE tenant_key = '' AND outcome = $1 ORDER BY last_end_ns DESC, run DESC",
        [outcome],
      );
      const wanted = rows.map((r) => r.run);
      expect(wanted.length).toBeGreaterThan(5);
      expect(wanted.length).toBeLessThan(expected.length - 5);
      const seen: RunSummary[] = [];
      let cursor: string | undefined;
      for (let pages = 0; pages < 100; pages++) {
        const page = await listRuns(t.db, '', { limit: 4, cursor, outcome });
        seen.push(...page.runs);
        if (!page.next_cursor) break;
        cursor = page.next_cursor;
      }
      expect(seen.map((r) => r.run)).toEqual(wanted);
      expect(seen.every((r) => r.outcome === outcome)).toBe(true);
    },
  );

  it('has ties in last end times (the test would not show the order of ties otherwise)', async () => {
    const rows = await t.db.query<{ n: bigint }>(
      'SELECT count(*) AS n FROM (SELECT last_end_ns FROM tapedeck.runs GROUP BY last_end_ns HAVING count(*) > 1) x',
    );
    expect(Number(rows[0].n)).toBeGreaterThan(3);
  });
});
