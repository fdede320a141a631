/**
 * Ingest resolves runs in memory (src/tapes/run-resolution.ts) and writes the result; the SQL
 * of src/tapes/resolve-runs.ts stays the reference (reindex and the ambiguous case use it).
 * Here both are run over the same random traces, on each database kind: spans in any order,
 * some stored before with the runs resolved then, own runs and explicit parent runs, parents
 * that are missing or loop, several traces sharing a run. Wherever the in-memory rule does not
 * answer 'ambiguous', every span's run and parent run equal what the SQL stores.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../src/store/database.js';
import { resolveRuns } from '../../src/tapes/resolve-runs.js';
import { resolveRunsInMemory, type RunNode } from '../../src/tapes/run-resolution.js';
import { createTestDatabase, databaseKinds, type TestDatabase } from '../helpers/databases.js';

/** xorshift32: the same cases on every run. */
function random(seed: number) {
  let x = seed || 1;
  const next = () => {
    x ^= x << 13;
    x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5;
    x >>>= 0;
    return x / 4294967296;
  };
  return { next, pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)], chance: (p: number) => next() < p };
}

interface Case {
  nodes: Omit<RunNode, 'runId' | 'parentRun'>[];
  storedFirst: number;
}

function randomCase(seed: number): Case {
  const r = random(seed);
  const traces = Array.from({ length: 1 + Math.floor(r.next() * 3) }, (_, i) =>
    (seed * 16 + i).toString(16).padStart(32, '0'),
  );
  const nodes: Case['nodes'] = [];
  for (const traceId of traces) {
    const count = 1 + Math.floor(r.next() * 9);
    const ids = Array.from({ length: count }, (_, i) => (i + 1).toString(16).padStart(16, '0'));
    ids.forEach((spanId, i) => {
      const parentSpanId =
        i === 0 || r.chance(0.1)
          ? r.pick([null, null, 'ffffffffffffffff']) // a root, or a parent that was never stored
          : r.chance(0.05)
            ? ids[Math.floor(r.next() * count)] // anywhere: may loop
            : ids[Math.floor(r.next() * i)]; // an earlier span
      nodes.push({
        traceId,
        spanId,
        parentSpanId,
        ownRun: r.chance(0.5) ? r.pick(['sess-a', 'sess-b', 'sess-c']) : null,
        ownParentRun: r.chance(0.15) ? r.pick(['parent-x', 'parent-y']) : null,
      });
    });
  }
  // delivery order is arbitrary; a prefix of it was stored (and resolved) by earlier requests
  for (let i = nodes.length - 1; i > 0; i--) {
    const j = Math.floor(r.next() * (i + 1));
    [nodes[i], nodes[j]] = [nodes[j], nodes[i]];
  }
  return { nodes, storedFirst: Math.floor(r.next() * nodes.length) };
}

async function insertNodes(db: Database, tenant: string, nodes: Case['nodes']): Promise<void> {
  if (nodes.length === 0) return;
  await db.query(
    `INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns, status_code,
       attributes, events, links, resource, own_run, own_parent_run)
     SELECT $1, decode(t, 'hex'), decode(s, 'hex'), decode(p, 'hex'), 'span', 'internal', 0, 1, 'unset', '{}', '[]', '[]', '{}', o, op
       FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS u(t, s, p, o, op)`,
    [
      tenant,
      nodes.map((n) => n.traceId),
      nodes.map((n) => n.spanId),
      nodes.map((n) => n.parentSpanId),
      nodes.map((n) => n.ownRun),
      nodes.map((n) => n.ownParentRun),
    ],
  );
}

async function readRuns(
  db: Database,
  tenant: string,
): Promise<Map<string, { runId: string | null; parentRun: string | null }>> {
  const rows = await db.query<{ t: string; s: string; run_id: string | null; parent_run: string | null }>(
    `SELECT encode(trace_id, 'hex') AS t, encode(span_id, 'hex') AS s, run_id, parent_run FROM tapedeck_store.spans WHERE tenant = $1`,
    [tenant],
  );
  return new Map(rows.map((r) => [`${r.t}/${r.s}`, { runId: r.run_id, parentRun: r.parent_run }]));
}

describe.each(databaseKinds)('in-memory run resolution on %s', (kind) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await createTestDatabase(kind);
  }, 60_000);
  afterAll(async () => {
    await t?.drop();
  });

  it('gives every span the run and parent run resolve-runs.ts stores, over 300 random cases', async () => {
    let compared = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const c = randomCase(seed);
      const tenant = `case-${seed}`;
      const traceIds = [
        ...new Set(c.nodes.map((n) => Buffer.from(n.traceId, 'hex')).map((b) => b.toString('hex'))),
      ].map((h) => Buffer.from(h, 'hex'));
      // earlier requests: stored, then resolved by the SQL as ingest did before
      await insertNodes(t.db, tenant, c.nodes.slice(0, c.storedFirst));
      await resolveRuns(t.db, tenant, traceIds);
      const before = await readRuns(t.db, tenant);
      const nodes: RunNode[] = c.nodes.map((n, i) => {
        const stored = i < c.storedFirst ? before.get(`${n.traceId}/${n.spanId}`)! : { runId: null, parentRun: null };
        return { ...n, ...stored };
      });
      const inMemory = resolveRunsInMemory(nodes);
      // this request: the rest, then the SQL over everything
      await insertNodes(t.db, tenant, c.nodes.slice(c.storedFirst));
      await resolveRuns(t.db, tenant, traceIds);
      const sql = await readRuns(t.db, tenant);
      if (inMemory === 'ambiguous') continue;
      compared++;
      expect(Object.fromEntries(inMemory), `seed ${seed}`).toEqual(Object.fromEntries(sql));
    }
    expect(compared).toBeGreaterThan(200);
  }, 120_000);

  it("answers 'ambiguous' when one run would get two different parent runs", () => {
    const trace = `${'0'.repeat(31)}1`;
    const node = (spanId: string, ownParentRun: string): RunNode => ({
      traceId: trace,
      spanId,
      parentSpanId: null,
      ownRun: 'sess',
      ownParentRun,
      runId: null,
      parentRun: null,
    });
    expect(resolveRunsInMemory([node('01'.repeat(8), 'parent-x'), node('02'.repeat(8), 'parent-y')])).toBe('ambiguous');
    expect(resolveRunsInMemory([node('01'.repeat(8), 'parent-x'), node('02'.repeat(8), 'parent-x')])).not.toBe(
      'ambiguous',
    );
  });
});
