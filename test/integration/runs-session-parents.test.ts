/**
 * A session spread over several traces whose roots carry no session key (an HTTP server span
 * around each turn) links to one `trace:<id>` run per trace. Such a run holding no step is
 * never the session's parent; among runs that hold steps the choice is the same whatever
 * order the traces arrive in and however they are batched (src/tapes/run-parents.ts), in
 * the runs view, in run pages and in the run tree. Spans built in the OTel GenAI layout.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SpanRecord } from '../../src/spans/span-record.js';
import { getRun } from '../../src/tapes/run-reader.js';
import { readChildRuns } from '../../src/tapes/child-runs.js';
import { pageRuns } from '../../src/runs/run-pages.js';
import { reindex } from '../../src/tapes/reindex.js';
import { databaseKinds } from '../helpers/databases.js';
import { span, type SpanInit } from '../helpers/span-builder.js';
import { ingestRecords, openTestStore, type TestStore } from '../unit/runs/store-fixtures.js';

const T1 = '11111111111111111111111111111111';
const T2 = '22222222222222222222222222222222';
const SESSION = 'sess-over-traces';

/** One turn of the session in its own trace: an HTTP root with no session key, a model call in the session. */
function turn(traceId: string, at: number, rootIsAgent: boolean): SpanRecord[] {
  const root: SpanInit = rootIsAgent
    ? {
        name: 'invoke_agent planner',
        attributes: { 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
      }
    : { name: 'GET /chat', kind: 'server', attributes: { 'http.request.method': 'GET' } };
  return [
    span({ ...root, id: `root${at}`, traceId, start: at, end: at + 50 }),
    span({
      name: 'chat gpt-4o-mini',
      id: `llm${at}`,
      parent: `root${at}`,
      traceId,
      start: at + 1,
      end: at + 40,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o-mini',
        'session.id': SESSION,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `turn ${at}` }] }]),
      },
    }),
  ];
}

async function parentsSeen(t: TestStore, tenant: string): Promise<unknown[]> {
  const view = await getRun(t.store.db, tenant, SESSION);
  const page = (await pageRuns(t.store.db, tenant, { since: null, until: null }, null, 100)).find(
    (r) => r.run === SESSION,
  );
  const children = await readChildRuns(t.store.db, tenant, [`trace:${T1}`, `trace:${T2}`], 10);
  return [view?.parent_run ?? null, page?.parent_run ?? null, children.map((c) => `${c.parent_run} > ${c.run}`)];
}

describe.each(databaseKinds)('a session spread over traces, on %s', (kind) => {
  // one store; each case writes under a tenant of its own
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(kind);
  });
  afterAll(async () => {
    await t?.drop();
  });
  const ingest = (tenant: string, batches: SpanRecord[][]) =>
    batches.reduce((p, spans) => p.then(() => ingestRecords(t.store, { spans, logs: [] }, tenant)), Promise.resolve());

  it('never takes a trace run with no step as its parent', async () => {
    await ingest('bare', [turn(T1, 0, false), turn(T2, 100, false)]);
    expect(await parentsSeen(t, 'bare')).toEqual([null, null, []]);
    // the trace runs are still listed, with no step
    expect((await getRun(t.store.db, 'bare', `trace:${T1}`))?.steps).toBe(0);
  });

  it('takes a trace run with steps, the same one whatever the order and batching', async () => {
    const first = turn(T1, 0, true);
    const second = turn(T2, 100, false);
    await ingest('in-order', [first, second]);
    await ingest('reversed', [second, first]);
    await ingest('one-batch', [[...second, ...first]]);
    const expected = [`trace:${T1}`, `trace:${T1}`, [`trace:${T1} > ${SESSION}`]];
    for (const tenant of ['in-order', 'reversed', 'one-batch'])
      expect(await parentsSeen(t, tenant), tenant).toEqual(expected);
  });

  it('chooses by byte order between two trace runs with steps, in any order', async () => {
    const first = turn(T1, 0, true);
    const second = turn(T2, 100, true);
    await ingest('both-in-order', [first, second]);
    await ingest('both-reversed', [second, first]);
    await ingest('both-one-batch', [[...first, ...second]]);
    for (const tenant of ['both-in-order', 'both-reversed', 'both-one-batch'])
      expect((await parentsSeen(t, tenant))[0], tenant).toBe(`trace:${T2}`);
  });

  it('keeps the choice through a reindex', async () => {
    await reindex(t.store.db, t.store.derive);
    expect(await parentsSeen(t, 'bare')).toEqual([null, null, []]);
    expect((await parentsSeen(t, 'reversed'))[0]).toBe(`trace:${T1}`);
    expect((await parentsSeen(t, 'both-reversed'))[0]).toBe(`trace:${T2}`);
  });
});
