/**
 * The runs list and the tape count the same steps, tokens and cost (docs/architecture.md,
 * "One call, two spans"): for every corpus capture, ingested through the ingest core, each
 * run's summary (tapedeck.runs, priced through tapedeck_store.run_steps) equals what its tape
 * adds up to.
 *
 * One more store holds a real capture reshaped: openllmetry-anthropic/lyon, whose model
 * calls are each an instrumentation span with the Anthropic SDK's span nested in it, with
 * both calls put under one llm span that records no request (a framework's model wrapper,
 * here an OpenInference LLM span with only its kind and model; one call under a context span
 * of it). That wrapper encloses two calls, so it is neither of them: the two calls stay two steps, each folding only its own
 * SDK span, in the tape and in the runs list alike.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Step } from '../../src/normalize/step.js';
import { costOfSteps } from '../../src/pricing/cost.js';
import { parsePricingTable } from '../../src/pricing/pricing-table.js';
import type { SpanRecord } from '../../src/spans/span-record.js';
import { runCosts } from '../../src/tapes/run-costs.js';
import { listRuns, type RunSummary } from '../../src/tapes/run-reader.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { listCaptures } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  ingestRecords,
  openTestStore,
  type LoadedCapture,
  type TestStore,
  captureTenant,
  ingestCapturesByTenant,
} from '../unit/runs/store-fixtures.js';

const PRICING = parsePricingTable(
  JSON.stringify({ models: { '*': { input: 1, output: 4, cache_read: 0.5, cache_write: 2 } } }),
);
const captures = listCaptures();
const tenantOf = captureTenant;
const WRAPPED = 'wrapped/openllmetry-anthropic/lyon';

function sum(steps: readonly Step[], field: keyof Step['tokens']): number | null {
  const values = steps.filter((s) => s.kind === 'llm').map((s) => s.tokens[field]);
  return values.every((v) => v === null) ? null : values.reduce<number>((a, v) => a + (v ?? 0), 0);
}

function tapeTotals(steps: readonly Step[]) {
  return {
    steps: steps.length,
    llm_steps: steps.filter((s) => s.kind === 'llm').length,
    tool_steps: steps.filter((s) => s.kind === 'tool').length,
    agent_steps: steps.filter((s) => s.kind === 'agent').length,
    errors: steps.filter((s) => s.status === 'error').length,
    tokens: {
      input: sum(steps, 'input'),
      output: sum(steps, 'output'),
      cache_read: sum(steps, 'cache_read'),
      cache_write: sum(steps, 'cache_write'),
    },
  };
}

function listedTotals(r: RunSummary) {
  const { steps, llm_steps, tool_steps, agent_steps, errors, tokens } = r;
  return { steps, llm_steps, tool_steps, agent_steps, errors, tokens };
}

/** The capture's model calls (instrumentation span + nested SDK span each) under one content-less llm span. */
function wrapCalls(c: LoadedCapture): SpanRecord[] {
  const calls = c.spans.filter((s) => s.scope.name.startsWith('@traceloop/') && s.name.startsWith('chat '));
  expect(calls.length, 'the capture has two model calls').toBe(2);
  const parent = calls[0].parentSpanId;
  expect(calls.every((s) => s.parentSpanId === parent)).toBe(true);
  const wrapper: SpanRecord = {
    ...calls[0],
    spanId: 'f0f0f0f0f0f0f0f0',
    name: 'ChatAnthropic',
    parentSpanId: parent,
    startTimeUnixNano: calls[0].startTimeUnixNano - 1000n,
    endTimeUnixNano: calls[1].endTimeUnixNano + 1000n,
    attributes: { 'openinference.span.kind': 'LLM', 'llm.model_name': 'claude-sonnet-4-6' },
    events: [],
    status: { code: 'ok', message: '' },
    scope: { name: '@arizeai/openinference-instrumentation-langchain', version: '4.0.0', attributes: {} },
  };
  // the first call sits under a context span of the wrapper (a retry scope, say), the second directly
  const context: SpanRecord = { ...wrapper, spanId: 'e0e0e0e0e0e0e0e0', name: 'attempt', attributes: {} };
  context.parentSpanId = wrapper.spanId;
  const wrapped = c.spans.map((s) =>
    s === calls[0]
      ? { ...s, parentSpanId: context.spanId }
      : s === calls[1]
        ? { ...s, parentSpanId: wrapper.spanId }
        : s,
  );
  return [...wrapped, wrapper, context];
}

describe.each(databaseKinds)('runs list and tape on %s', (kind) => {
  let t: TestStore;
  let loaded = new Map<string, LoadedCapture>();

  beforeAll(async () => {
    t = await openTestStore(kind);
    loaded = await ingestCapturesByTenant(t.store, captures);
    const lyon = loaded.get('openllmetry-anthropic/lyon') as LoadedCapture;
    await ingestRecords(t.store, { spans: wrapCalls(lyon), logs: lyon.logs }, WRAPPED);
  }, 180_000);
  afterAll(async () => t?.drop());

  async function compareRuns(tenant: string): Promise<Map<string, Step[]>> {
    const page = await listRuns(t.store.db, tenant, { limit: 100 });
    expect(page.runs.length).toBeGreaterThan(0);
    const costs = await runCosts(
      t.store.db,
      tenant,
      page.runs.map((r) => r.run),
      PRICING,
    );
    const tapes = new Map<string, Step[]>();
    for (const r of page.runs) {
      const tape = await readTape(t.store, tenant, r.run);
      expect(tape, r.run).toBeDefined();
      const steps = tape?.steps ?? [];
      tapes.set(r.run, steps);
      expect(listedTotals(r), r.run).toEqual(tapeTotals(steps));
      expect(costs.get(r.run), r.run).toBe(costOfSteps(steps, PRICING));
    }
    return tapes;
  }

  it.each(captures.map((ref) => [tenantOf(ref)]))('%s: each run counts what its tape shows', async (tenant) => {
    await compareRuns(tenant);
  });

  it('a content-less model span around two calls absorbs neither', async () => {
    const tapes = await compareRuns(WRAPPED);
    const llm = [...tapes.values()].flat().filter((s) => s.kind === 'llm');
    expect(llm.map((s) => s.name).sort()).toEqual([
      'ChatAnthropic',
      'chat claude-sonnet-4-6',
      'chat claude-sonnet-4-6',
    ]);
    const wrapper = llm.find((s) => s.name === 'ChatAnthropic') as Step;
    expect(wrapper.request).toBeNull();
    const calls = llm.filter((s) => s !== wrapper);
    // each call kept its own request and folded only its own SDK span (whose status it took)
    expect(new Set(calls.map((s) => s.request_digest)).size).toBe(2);
    for (const s of calls) expect(s.tokens.input).toBeGreaterThan(0);
    // the unwrapped capture's calls, token for token
    const plain = [...(await compareRuns('openllmetry-anthropic/lyon')).values()]
      .flat()
      .filter((s) => s.kind === 'llm');
    expect(calls.map((s) => [s.request_digest, s.tokens])).toEqual(plain.map((s) => [s.request_digest, s.tokens]));
  });
});
