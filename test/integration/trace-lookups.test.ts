/**
 * What an ingest transaction reads of what a tenant already stores (src/tapes/trace-store.ts),
 * on PGlite and PostgreSQL: the run facts of its traces' spans, spans by trace and span id, and
 * their log records. Each finds exactly the rows asked for, and reads the tables by the key
 * even when the statistics say the tenant holds only a few rows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../../src/store/database.js';
import { RESOLVE_RUNS, resolveRuns } from '../../src/tapes/resolve-runs.js';
import { CHILD_RUNS, SETTLE_PARENTS, settleRunParents } from '../../src/tapes/run-parents.js';
import {
  readLogsFor,
  readRunNodes,
  readSpans,
  LOCK_SPANS,
  STORED_RUN_NODES,
  STORED_SPANS,
  UPDATE_RUNS,
  updateRuns,
} from '../../src/tapes/trace-store.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';
import { insertSpans, scanConditions, spanIdSql, traceIdSql, withLaggingStatistics } from '../helpers/query-plans.js';
import { signal } from '../helpers/signal.js';

const TRACES = 400;
const SPANS_PER_TRACE = 8;

describe.each(databaseKinds)('look-ups by key on %s', (kind) => {
  let t: TestDatabase;
  const hex = async (sql: string) => (await t.db.query<{ h: string }>(`SELECT encode(${sql}, 'hex') AS h`))[0].h;

  beforeAll(async () => {
    t = await createTestDatabase(kind);
    await insertSpans(t.db, 'stale', TRACES, SPANS_PER_TRACE);
    // two log records for the first span of every trace, the later one sent first
    await t.db.query(
      `INSERT INTO tapedeck_store.logs (tenant, record_key, trace_id, span_id, time_ns, observed_time_ns,
                                        attributes, resource, position)
       SELECT 'stale', sha256(('log ' || a.t || ' ' || n.n)::bytea), ${traceIdSql('a.t')}, ${spanIdSql('a.t', 1)},
              2000 - n.n, 0, jsonb_build_object('text', repeat('y', 1500)), '{}', n.n
         FROM generate_series(1, ${TRACES}) AS a(t) CROSS JOIN generate_series(1, 2) AS n(n)`,
    );
    // a step for every span
    await t.db.query(
      `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, status, fingerprint, layout,
                                         normalizer_version)
       SELECT tenant, trace_id, span_id, 'model', name, 'ok', 'f', 'test', 1 FROM tapedeck_store.spans`,
    );
    for (const table of ['spans', 'logs', 'steps']) await t.db.query(`ANALYZE tapedeck_store.${table}`);
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('reads what is asked for by its key, even when the statistics say the tenant holds only a few', async () => {
    const asked = Array.from({ length: 64 }, (_, i) => 3 + i * 5);
    const traceIds = await Promise.all(asked.map((n) => hex(traceIdSql(n))));
    const pairs = await Promise.all(
      asked.map(async (n, i) => [traceIds[i], await hex(spanIdSql(n, 1))] as [string, string]),
    );
    const ids = (list: string[]) => list.map((h) => Buffer.from(h, 'hex'));

    await withLaggingStatistics(
      t.db,
      ['tapedeck_store.spans', 'tapedeck_store.logs', 'tapedeck_store.steps'],
      async () => {
        const byTrace = ['stale', ids(traceIds)];
        const byPair = ['stale', ids(pairs.map(([tr]) => tr)), ids(pairs.map(([, s]) => s))];
        // the hazard: under these statistics PostgreSQL 15 reads the tenant for a plain
        // `= ANY` and filters (PGlite's planner probes the key here)
        if (kind === 'postgres') {
          const plain = await scanConditions(
            t.db,
            'SELECT span_id FROM tapedeck_store.spans WHERE tenant = $1 AND trace_id = ANY($2::bytea[])',
            byTrace,
            /^spans/,
          );
          expect(plain.some((by) => !by.includes('trace_id'))).toBe(true);
        }
        // where the asked spans' rows are, as LOCK_SPANS answers, for the plan of UPDATE_RUNS
        const rows = await t.db.query<{ t: string; c: string }>(
          `SELECT tableoid::text AS t, ctid::text AS c FROM tapedeck_store.spans
            WHERE tenant = 'stale' AND (trace_id, span_id) IN (SELECT * FROM unnest($1::bytea[], $2::bytea[]))`,
          byPair.slice(1),
        );
        expect(rows).toHaveLength(pairs.length);
        const byRow = [rows.map((r) => r.t), rows.map((r) => r.c), rows.map(() => 'x'), rows.map(() => null)];
        for (const [sql, params, table] of [
          [STORED_RUN_NODES, byTrace, /^spans/],
          [STORED_SPANS, byPair, /^spans/],
          [CHILD_RUNS, byTrace, /^spans/],
          [LOCK_SPANS, byPair, /^spans/],
          [UPDATE_RUNS, byRow, /^spans/],
          [RESOLVE_RUNS, byTrace, /^spans/],
        ] as const) {
          const scans = await scanConditions(t.db, sql, [...params], table);
          expect(scans.length).toBeGreaterThan(0);
          // a span's row is read by its key, or by where a probe of its key found it
          for (const by of scans) expect(by).toMatch(/trace_id|ctid/);
        }
        // parent runs settled: spans by run (its own index) or by trace, steps by trace and span
        const params = ['stale', ['run 3', 'run 8']];
        const spanScans = await scanConditions(t.db, SETTLE_PARENTS, params, /^spans/);
        expect(spanScans.length).toBeGreaterThan(2);
        for (const by of spanScans) expect(by).toMatch(/trace_id|run_id/);
        // and by run through the index that leads with the run, not one it filters inside
        const byIndex = await scanConditions(t.db, SETTLE_PARENTS, params, /^spans.*(_idx|_pkey)$/);
        const byRunIndex = await scanConditions(t.db, SETTLE_PARENTS, params, /_run_id_start_ns_idx$/);
        expect(byRunIndex.length).toBeGreaterThan(1);
        expect(byIndex.filter((by) => by.includes('run_id'))).toHaveLength(byRunIndex.length);
        const stepScans = await scanConditions(t.db, SETTLE_PARENTS, params, /^steps/);
        expect(stepScans.length).toBeGreaterThan(0);
        for (const by of stepScans) expect(by).toMatch(/trace_id/);

        const nodes = await t.db.transaction((tx) => readRunNodes(tx, 'stale', traceIds));
        expect(nodes.size).toBe(asked.length * SPANS_PER_TRACE);
        expect(new Set([...nodes.values()].map((n) => n.traceId))).toEqual(new Set(traceIds));

        // a pair asked twice is read once
        const spans = await t.db.transaction((tx) => readSpans(tx, 'stale', [...pairs, pairs[0]]));
        expect(spans.map((s) => `${s.traceId}/${s.spanId}`).sort()).toEqual(
          pairs.map(([tr, s]) => `${tr}/${s}`).sort(),
        );

        // the spans asked for take a new run, and only they
        const moved = await t.db.transaction(async (tx) => {
          await updateRuns(
            tx,
            'stale',
            pairs.map(([traceId, spanId]) => ({ traceId, spanId, runId: 'moved', parentRun: 'parent' })),
          );
          return readRunNodes(tx, 'stale', traceIds);
        });
        const movedKeys = [...moved.values()].filter((n) => n.runId === 'moved' && n.parentRun === 'parent');
        expect(movedKeys.map((n) => `${n.traceId}/${n.spanId}`).sort()).toEqual(
          pairs.map(([tr, s]) => `${tr}/${s}`).sort(),
        );

        const logs = await t.db.transaction((tx) => readLogsFor(tx, 'stale', spans));
        expect(logs.size).toBe(asked.length);
        for (const list of logs.values()) expect(list.map((l) => l.timeUnixNano)).toEqual([1998n, 1999n]);
      },
    );
  });

  // Each writer finds and locks its rows, then writes them where found: a row another
  // transaction is updating is waited for and written once that commits, never skipped.
  // PGlite runs one transaction at a time: there is nothing to wait for.
  const writers: {
    name: string;
    trace: number;
    before?: (traceId: string) => string;
    write: (tx: Queryable, traceId: string, spanId: string) => Promise<void>;
    expected: (traceId: string) => { run_id: string; parent_run: string | null };
  }[] = [
    {
      name: 'sets the run of a span',
      trace: 7,
      write: (tx, traceId, spanId) => updateRuns(tx, 'stale', [{ traceId, spanId, runId: 'mine', parentRun: 'mine' }]),
      expected: () => ({ run_id: 'mine', parent_run: 'mine' }),
    },
    {
      name: "settles a child run's parent run on a span",
      trace: 9,
      before: (traceId) => `UPDATE tapedeck_store.spans SET own_parent_run = 'named parent'
                             WHERE tenant = 'stale' AND trace_id = '\\x${traceId}' AND span_id = ${spanIdSql(9, 1)}`,
      write: (tx, traceId) => settleRunParents(tx, 'stale', [Buffer.from(traceId, 'hex')], ['run 9']),
      expected: () => ({ run_id: 'run 9', parent_run: 'named parent' }),
    },
    {
      name: 'resolves the run of a span in SQL',
      trace: 11,
      write: (tx, traceId) => resolveRuns(tx, 'stale', [Buffer.from(traceId, 'hex')]),
      expected: (traceId) => ({ run_id: `trace:${traceId}`, parent_run: null }),
    },
  ];
  it.skipIf(kind === 'pglite').each(writers.map((w) => [w.name, w] as const))(
    '%s another transaction is updating, once that commits',
    async (_, { trace: n, before, write, expected }) => {
      const traceId = await hex(traceIdSql(n));
      const spanId = await hex(spanIdSql(n, 2));
      if (before) await t.db.query(before(traceId));
      const key = `tenant = 'stale' AND trace_id = '\\x${traceId}' AND span_id = '\\x${spanId}'`;
      const { fired: holding, fire: release } = signal();
      const { fired: hasUpdated, fire: updated } = signal();
      // another transaction (a parent run settled for a run across traces, say) updates the row
      const other = t.db.transaction(async (tx) => {
        await tx.query(`UPDATE tapedeck_store.spans SET parent_run = 'other' WHERE ${key}`);
        updated();
        await holding;
      });
      await hasUpdated;
      let done = false;
      const mine = t.db
        .transaction((tx) => write(tx, traceId, spanId))
        .then(() => {
          done = true;
        });
      await new Promise((r) => setTimeout(r, 300));
      expect(done).toBe(false); // waiting for the other's row lock
      release();
      await Promise.all([other, mine]);
      const [row] = await t.db.query<{ run_id: string; parent_run: string | null }>(
        `SELECT run_id, parent_run FROM tapedeck_store.spans WHERE ${key}`,
      );
      expect(row).toEqual(expected(traceId));
    },
  );
});
