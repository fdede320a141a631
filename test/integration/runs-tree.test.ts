/**
 * A multi-agent capture — a coordinator agent whose sub-agents run
 * under their own session ids, in one trace, recorded with the real OpenTelemetry SDK
 * (test/fixtures/multi-agent) — reconstructs as a tree: the coordinator at the root, its
 * sub-agents as children in start order, a sub-sub-agent under its parent, every run
 * reconstructed with no model call; limits cut the tree and say so.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { createApp } from '../../src/api/app.js';
import { createRunRoutes } from '../../src/api/run-routes.js';
import { TapedeckSpanExporter } from '../../src/exporter/tapedeck-span-exporter.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { silentLogger } from '../../src/logger.js';
import { buildRunTree, type RunTree, type RunTreeNode } from '../../src/runs/tree.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  COORDINATOR_QUESTION,
  COORDINATOR_SYSTEM,
  FINAL_ANSWER,
  RUNS,
  recordCoordinatorRun,
} from '../fixtures/multi-agent/coordinator-capture.js';
import { loadCoordinatorFixture, recordCoordinatorSpans } from '../fixtures/multi-agent/coordinator-fixture.js';
import { openTestStore, type TestStore } from '../unit/runs/store-fixtures.js';

const j = (v: unknown) => JSON.stringify(v);

const shape = (n: RunTreeNode): unknown => ({ run: n.run, children: n.children.map(shape) });
const EXPECTED_SHAPE = {
  run: RUNS.coordinator,
  children: [
    { run: RUNS.paris, children: [{ run: RUNS.units, children: [] }] },
    { run: RUNS.lyon, children: [] },
  ],
};

it('the saved capture is what the SDK records (regenerate with UPDATE_FIXTURES=1)', async () => {
  const { spans } = await recordCoordinatorSpans();
  const saved = loadCoordinatorFixture();
  const strip = (s: (typeof spans)[number]) => ({ ...s, flags: 0 }); // the JSON body drops the has/is-remote bits
  expect(saved.map(strip)).toEqual(spans.map(strip));
});

describe.each(databaseKinds)('run tree on %s', (kind) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(kind);
    // Spans in the order the SDK ended them: children before their parents.
    await ingestSpans(loadCoordinatorFixture(), { tenant: '' }, t.store.ingest);
  });
  afterAll(async () => t?.drop());

  it('puts the coordinator at the root and its sub-agents under it in start order', async () => {
    const tree = (await buildRunTree(t.store, '', RUNS.coordinator)) as RunTree;
    expect(shape(tree.root)).toEqual(EXPECTED_SHAPE);
    expect(tree.run_count).toBe(4);
    expect(tree.truncated).toBe(false);
    expect(tree.truncated_by).toEqual([]);
    expect(tree.root.children.map((c) => c.parent_run)).toEqual([RUNS.coordinator, RUNS.coordinator]);
    const starts = tree.root.children.map((c) => c.start_ns as bigint);
    expect(starts[0] < starts[1]).toBe(true);
  });

  it('reconstructs every run of the tree', async () => {
    const tree = (await buildRunTree(t.store, '', RUNS.coordinator)) as RunTree;
    const root = tree.root;
    expect(root.status).toBe('complete');
    expect(root.depth).toBe(0);
    expect(root.input).toEqual([
      { role: 'system', content: COORDINATOR_SYSTEM },
      { role: 'user', content: COORDINATOR_QUESTION },
    ]);
    expect(root.output).toBe(FINAL_ANSWER);
    expect(root.model_calls).toBe(2);
    expect(root.tool_calls).toEqual([
      {
        id: 'call_ask_paris',
        name: 'ask_agent',
        // as recorded: the tools' JSON text
        arguments: j({ agent: 'weather-agent', task: 'Paris' }),
        result: j({ agent: 'weather-agent', answer: 'Paris: 18°C, partly cloudy.' }),
        status: 'unset',
        source: 'tool_step',
      },
      {
        id: 'call_ask_lyon',
        name: 'ask_agent',
        arguments: j({ agent: 'weather-agent', task: 'Lyon' }),
        result: j({ agent: 'weather-agent', answer: 'Lyon: 21°C, sunny.' }),
        status: 'unset',
        source: 'tool_step',
      },
    ]);
    const [paris, lyon] = root.children;
    expect([paris.output, lyon.output]).toEqual(['Paris: 18°C, partly cloudy.', 'Lyon: 21°C, sunny.']);
    expect(paris.tool_calls.map((c) => [c.name, c.arguments, c.result])).toEqual([
      ['get_weather', j({ city: 'Paris' }), j({ city: 'Paris', temperature_c: 18, condition: 'partly cloudy' })],
    ]);
    expect(paris.children[0]).toMatchObject({
      run: RUNS.units,
      depth: 2,
      output: '18°C is 64.4°F.',
      status: 'complete',
      parent_run: RUNS.paris,
    });
  });

  it('bounds depth, children per run and runs per tree, saying truncated', async () => {
    const shallow = (await buildRunTree(t.store, '', RUNS.coordinator, { limits: { maxDepth: 1 } })) as RunTree;
    expect(shape(shallow.root)).toEqual({
      ...EXPECTED_SHAPE,
      children: [
        { run: RUNS.paris, children: [] },
        { run: RUNS.lyon, children: [] },
      ],
    });
    expect(shallow.root.children[0].children_truncated).toBe(true);
    expect([shallow.truncated, shallow.truncated_by, shallow.run_count]).toEqual([true, ['depth'], 3]);

    const narrow = (await buildRunTree(t.store, '', RUNS.coordinator, { limits: { maxChildren: 1 } })) as RunTree;
    expect(narrow.root.children.map((c) => c.run)).toEqual([RUNS.paris]);
    expect(narrow.root.children_truncated).toBe(true);
    expect(narrow.truncated_by).toEqual(['children']);

    const small = (await buildRunTree(t.store, '', RUNS.coordinator, { limits: { maxRuns: 2 } })) as RunTree;
    expect(shape(small.root)).toEqual({ run: RUNS.coordinator, children: [{ run: RUNS.paris, children: [] }] });
    expect([small.run_count, small.truncated_by]).toEqual([2, ['runs']]);

    const leaf = (await buildRunTree(t.store, '', RUNS.lyon)) as RunTree;
    expect([leaf.run_count, leaf.root.children, leaf.truncated]).toEqual([1, [], false]);
    expect(await buildRunTree(t.store, '', 'no-such-run')).toBeUndefined();
  });

  it('serves GET /v1/runs/{run}/tree and /reconstruct', async () => {
    const app = createApp({
      logger: silentLogger(),
      routes: [createRunRoutes(t.store, loadConfig({}))],
      ready: async () => ({ ok: true }),
    });
    const res = await app.request(`/v1/runs/${RUNS.coordinator}/tree?max_children=1`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect([body.run_count, body.truncated, body.limits]).toEqual([
      3,
      true,
      { max_children: 1, max_depth: 8, max_runs: 500 },
    ]);
    expect(body.root.children[0].children[0].run).toBe(RUNS.units);

    const rec = await app.request(`/v1/runs/${RUNS.lyon}/reconstruct`);
    expect(rec.status).toBe(200);
    expect(await rec.json()).toMatchObject({
      run: RUNS.lyon,
      parent_run: RUNS.coordinator,
      status: 'complete',
      output: 'Lyon: 21°C, sunny.',
    });

    const missing = await app.request('/v1/runs/nope/tree');
    expect([missing.status, ((await missing.json()) as any).error.type]).toEqual([404, 'not_found']);
    const bad = await app.request(`/v1/runs/${RUNS.coordinator}/tree?max_depth=99999`);
    expect([bad.status, ((await bad.json()) as any).error.type]).toEqual([400, 'bad_input']);
  });

  it('builds the same tree from spans sent live through TapedeckSpanExporter', async () => {
    const exporter = new TapedeckSpanExporter({ store: t.store, tenant: 'live' });
    await recordCoordinatorRun(exporter);
    const tree = (await buildRunTree(t.store, 'live', RUNS.coordinator)) as RunTree;
    expect(shape(tree.root)).toEqual(EXPECTED_SHAPE);
    expect(tree.root.output).toBe(FINAL_ANSWER);
  });
});
