import { describe, expect, it } from 'vitest';
import { Deadline } from '../../../src/deadline/deadline.js';
import { diffRuns } from '../../../src/diff/diff-runs.js';
import type { DiffOptions, RunDiff } from '../../../src/diff/types.js';
import { renderJson } from '../../../src/json/canonical.js';
import type { Step, Tape } from '../../../src/normalize/step.js';
import { parsePricingTable } from '../../../src/pricing/pricing-table.js';
import { llmStep, tapeOf, toolStep, withInserted, withStep } from '../../fixtures/diff/build.js';
import { fullLyon, fullWeather, LATER_NS, callsOnlyLyon, callsOnlyWeather } from '../../fixtures/diff/weather-lyon.js';

function opts(extra: Partial<DiffOptions> = {}): DiffOptions {
  return { deadline: new Deadline(60_000), pricing: null, nowNs: LATER_NS, ...extra };
}

function ops(diff: RunDiff): string[] {
  return diff.aligned.map((e) => `${e.op}${e.why ? `/${e.why}` : ''} ${e.a}:${e.b}`);
}

/** the same step with a different model (a model swap) */
function swapModel(step: Step, model: string): Step {
  return { ...step, model, fingerprint: step.fingerprint.replace(/^llm:[^#]*/, `llm:${model}`) };
}

describe('diffRuns: weather vs lyon (the seed example)', () => {
  const diff = diffRuns(callsOnlyWeather(), callsOnlyLyon(), opts());

  it('names step 0 as the first divergence, of kind input, with a plain explanation', () => {
    const a0 = callsOnlyWeather().steps[0].request_digest as string;
    const b0 = callsOnlyLyon().steps[0].request_digest as string;
    expect(diff.first_divergence).toEqual({
      a: 0,
      b: 0,
      kind: 'input',
      explanation: `step 0 of a and step 0 of b (llm:gpt-4o-mini-2024-07-18) received different input: request ${a0.slice(0, 12)} in a, ${b0.slice(0, 12)} in b`,
    });
  });

  it('classifies every aligned step, step for step', () => {
    expect(ops(diff)).toEqual(['changed/input 0:0', 'changed/input 1:1', 'changed/input 2:2']);
    expect(diff.aligned[1].fingerprint_a).toBe(callsOnlyWeather().steps[1].fingerprint);
    expect(diff.aligned[1].fingerprint_b).toBe(callsOnlyLyon().steps[1].fingerprint);
  });

  it('summarizes both sides and reports b − a deltas', () => {
    expect(diff.a).toEqual({
      run: 'sess-openllmetry-openai-weather',
      steps: 3,
      cost_usd: null,
      tokens: 123 + 7 + 209 + 17,
      duration_ns: 1796032208928618575n - 1796032208839000000n,
      errors: 0,
      outcome: 'success',
      truncated: false,
    });
    expect(diff.b.tokens).toBe(122 + 7 + 206 + 15);
    expect(diff.delta).toEqual({
      cost_usd: null,
      tokens: -6,
      errors: 0,
      steps: 0,
      duration_ns: 1796032218378497978n - 1796032218348000000n - (1796032208928618575n - 1796032208839000000n),
    });
    expect(diff.truncated).toBe(false);
  });

  it('prices both sides from a table, and the delta with them', () => {
    const pricing = parsePricingTable('{"models": {"gpt-4o-mini*": {"input": 0.15, "output": 0.6}}}');
    const priced = diffRuns(callsOnlyWeather(), callsOnlyLyon(), opts({ pricing }));
    expect(priced.a.cost_usd).toBeCloseTo(((123 + 209) * 0.15 + (7 + 17) * 0.6) / 1e6, 12);
    expect(priced.delta.cost_usd).toBeCloseTo((-4 * 0.15 + -2 * 0.6) / 1e6, 12);
  });

  it('renders with exactly the seed keys, sorted, nanoseconds as exact integers', () => {
    const parsed = JSON.parse(renderJson(diff)) as Record<string, unknown>;
    expect(Object.keys(parsed)).toEqual(['a', 'aligned', 'b', 'delta', 'first_divergence', 'truncated']);
    expect(Object.keys(parsed.a as object)).toEqual([
      'cost_usd',
      'duration_ns',
      'errors',
      'outcome',
      'run',
      'steps',
      'tokens',
      'truncated',
    ]);
    expect(Object.keys(parsed.delta as object)).toEqual(['cost_usd', 'duration_ns', 'errors', 'steps', 'tokens']);
    expect(Object.keys((parsed.aligned as object[])[0])).toEqual([
      'a',
      'b',
      'fingerprint_a',
      'fingerprint_b',
      'op',
      'why',
    ]);
    expect(Object.keys(parsed.first_divergence as object)).toEqual(['a', 'b', 'explanation', 'kind']);
    expect(renderJson(diff)).toContain('"duration_ns":89618575');
  });
});

describe('diffRuns: the full captures, agent step included', () => {
  const diff = diffRuns(fullWeather(), fullLyon(), opts());

  it('classifies the agent step as a changed decision (same input, different answer)', () => {
    expect(ops(diff)).toEqual(['changed/decision 0:0', 'changed/input 1:1', 'changed/input 2:2', 'changed/input 3:3']);
  });

  it('passes over the agent for the model call inside it, which parted first', () => {
    expect(diff.first_divergence?.a).toBe(1);
    expect(diff.first_divergence?.kind).toBe('input');
  });

  it('keeps a decision change first when nothing inside the step diverged', () => {
    const a = fullWeather();
    const b = withStep(fullWeather(), 3, { ...a.steps[3], response: 'x', response_digest: 'f'.repeat(64) });
    const d = diffRuns(a, b, opts());
    // the agent (0) is the final call's ancestor, so the call (3) is named, not the agent
    expect(d.first_divergence?.a).toBe(3);
    expect(d.first_divergence?.kind).toBe('decision');
    expect(d.first_divergence?.explanation).toMatch(
      /received the same input and answered differently: response \w{12} in a, ffffffffffff in b$/,
    );
  });
});

describe('diffRuns: structure and config', () => {
  const weather = callsOnlyWeather();
  const extraTool = toolStep({
    span_id: 'ffff000000000001',
    start_ns: 1796032208900200000n,
    end_ns: 1796032208900300000n,
    tool: 'get_forecast',
    request: { city: 'Paris' },
    response: { tomorrow: 'rain' },
  });

  it('shows an extra tool step as exactly one insert, and shifts nothing after it', () => {
    const diff = diffRuns(weather, withInserted(weather, 2, extraTool), opts());
    expect(ops(diff)).toEqual(['same 0:0', 'same 1:1', 'insert/structure null:2', 'same 2:3']);
    expect(diff.first_divergence).toMatchObject({ a: null, b: 2, kind: 'structure' });
    expect(diff.first_divergence?.explanation).toBe(
      'step 2 of b (tool:get_forecast) has no counterpart in a: b took a step a did not',
    );
    expect(diff.delta.steps).toBe(1);
  });

  it('shows a repeated tool call (same signature) as one insert too', () => {
    const again = { ...weather.steps[1], span_id: 'ffff000000000002' };
    const diff = diffRuns(weather, withInserted(weather, 2, again), opts());
    expect(ops(diff)).toEqual(['same 0:0', 'same 1:1', 'insert/structure null:2', 'same 2:3']);
  });

  it('shows a missing step as one delete', () => {
    const diff = diffRuns(withInserted(weather, 1, extraTool), weather, opts());
    expect(ops(diff)).toEqual(['same 0:0', 'delete/structure 1:null', 'same 2:1', 'same 3:2']);
    expect(diff.first_divergence?.explanation).toBe(
      'step 1 of a (tool:get_forecast) has no counterpart in b: b did not take this step',
    );
  });

  it('pairs a model swap as one config change, not a delete and an insert', () => {
    const b = withStep(weather, 2, swapModel(weather.steps[2], 'gpt-4o-2024-08-06'));
    const diff = diffRuns(weather, b, opts());
    expect(ops(diff)).toEqual(['same 0:0', 'same 1:1', 'changed/config 2:2']);
    expect(diff.first_divergence?.explanation).toBe(
      'step 2 of a and step 2 of b (llm:gpt-4o-mini-2024-07-18 in a, llm:gpt-4o-2024-08-06 in b) ran with a different configuration: ' +
        'model gpt-4o-mini-2024-07-18 in a, gpt-4o-2024-08-06 in b; all 2 parameters are the same',
    );
  });

  it('pairs every swapped call of a stretch, in order, around the steps that still align', () => {
    const b = tapeOf(
      'b',
      weather.steps.map((s) => (s.kind === 'llm' ? swapModel(s, 'gpt-4o') : s)),
    );
    expect(ops(diffRuns(weather, b, opts()))).toEqual(['changed/config 0:0', 'same 1:1', 'changed/config 2:2']);
  });

  it('reports a changed parameter as config and counts the parameters that differ', () => {
    const s0 = weather.steps[0];
    const b = withStep(weather, 0, { ...s0, params: { ...s0.params, temperature: 0.9, seed: 7 } });
    const diff = diffRuns(weather, b, opts());
    expect(ops(diff)[0]).toBe('changed/config 0:0');
    expect(diff.first_divergence?.explanation).toBe(
      'step 0 of a and step 0 of b (llm:gpt-4o-mini-2024-07-18) ran with a different configuration: 2 of 3 parameters differ (seed, temperature)',
    );
  });

  it('classifies a pair that differs in input and configuration as input, and names both', () => {
    const lyon = callsOnlyLyon();
    const l0 = lyon.steps[0];
    const b = withStep(lyon, 0, { ...l0, params: { ...l0.params, max_tokens: 64 } });
    const diff = diffRuns(callsOnlyWeather(), b, opts());
    expect(ops(diff)[0]).toBe('changed/input 0:0');
    const a0 = weather.steps[0].request_digest as string;
    const b0 = l0.request_digest as string;
    expect(diff.first_divergence).toEqual({
      a: 0,
      b: 0,
      kind: 'input',
      explanation:
        `step 0 of a and step 0 of b (llm:gpt-4o-mini-2024-07-18) received different input: request ${a0.slice(0, 12)} in a, ${b0.slice(0, 12)} in b, ` +
        `and ran with a different configuration: 1 of ${Object.keys(b.steps[0].params).length} parameters differs (max_tokens)`,
    });
  });

  it('compares configuration whole: equal nested values in another key order are the same', () => {
    const tools = { schema: { b: [1, { c: 'x'.repeat(200_000) }], a: null } };
    const x = withStep(weather, 0, { ...weather.steps[0], params: { ...tools, temperature: 0.2 } });
    const y = withStep(weather, 0, {
      ...weather.steps[0],
      params: { temperature: 0.2, schema: { a: null, b: [1, { c: 'x'.repeat(200_000) }] } },
    });
    const z = withStep(weather, 0, {
      ...weather.steps[0],
      params: { temperature: 0.2, schema: { a: null, b: [1, { c: `${'x'.repeat(199_999)}y` }] } },
    });
    expect(ops(diffRuns(x, z, opts()))[0]).toBe('changed/config 0:0');
    expect(ops(diffRuns(x, y, opts()))[0]).toBe('same 0:0');
  });

  it('classifies same input, different output as a decision', () => {
    const s2 = weather.steps[2];
    const b = withStep(weather, 2, { ...s2, response_digest: '0'.repeat(64) });
    expect(ops(diffRuns(weather, b, opts()))).toEqual(['same 0:0', 'same 1:1', 'changed/decision 2:2']);
  });

  it('does not compare status: an errored step with the same digests is same', () => {
    const b = withStep(weather, 1, { ...weather.steps[1], status: 'error' });
    const diff = diffRuns(weather, b, opts());
    expect(ops(diff)).toEqual(['same 0:0', 'same 1:1', 'same 2:2']);
    expect(diff.first_divergence).toBeNull();
    expect(diff.b.errors).toBe(1);
    expect(diff.delta.errors).toBe(1);
  });
});

describe('diffRuns: bounds and outcome', () => {
  const weather = callsOnlyWeather();

  it('compares at most maxSteps per side and says truncated', () => {
    const diff = diffRuns(weather, weather, opts({ maxSteps: 2 }));
    expect(diff.aligned).toHaveLength(2);
    expect(diff.truncated).toBe(true);
    expect(diff.a.steps).toBe(3);
  });

  it('carries a side cut at the span bound as truncated, with an unknown outcome', () => {
    const cut: Tape = { ...weather, truncated: true };
    const diff = diffRuns(weather, cut, opts());
    expect(diff.b).toMatchObject({ truncated: true, outcome: 'unknown' });
    expect(diff.truncated).toBe(true);
  });

  it('says unknown for a run whose last span ended within 15 minutes of now', () => {
    const end = weather.steps[2].start_ns + weather.steps[2].duration_ns;
    expect(diffRuns(weather, weather, opts({ nowNs: end + 14n * 60n * 1_000_000_000n })).a.outcome).toBe('unknown');
    expect(diffRuns(weather, weather, opts({ nowNs: end + 15n * 60n * 1_000_000_000n })).a.outcome).toBe('success');
  });

  it('says failure when the last step errored, success when the run recovered', () => {
    const lastFailed = withStep(weather, 2, { ...weather.steps[2], status: 'error' });
    expect(diffRuns(lastFailed, weather, opts()).a.outcome).toBe('failure');
    const recovered = withStep(weather, 1, { ...weather.steps[1], status: 'error' });
    expect(diffRuns(recovered, weather, opts()).a.outcome).toBe('success');
  });

  it('uses the run-level facts a loader supplies (all spans, not just steps)', () => {
    const withFacts = {
      ...weather,
      first_start_ns: 1796032208838000000n,
      last_end_ns: 1796032208963041423n,
      outcome: 'failure' as const,
    };
    const diff = diffRuns(withFacts, weather, opts());
    expect(diff.a.duration_ns).toBe(1796032208963041423n - 1796032208838000000n);
    expect(diff.a.outcome).toBe('failure');
  });

  it('reports null tokens, not a partial sum, when a model call did not report them', () => {
    const b = withStep(
      weather,
      0,
      llmStep({
        span_id: 'x',
        start_ns: 1n,
        end_ns: 2n,
        model: 'gpt-4o-mini-2024-07-18',
        request: null,
        response: null,
      }),
    );
    const diff = diffRuns(weather, b, opts());
    expect(diff.b.tokens).toBeNull();
    expect(diff.delta.tokens).toBeNull();
  });

  it('diffs two empty runs without a divergence', () => {
    const diff = diffRuns(tapeOf('e1', []), tapeOf('e2', []), opts());
    expect(diff.aligned).toEqual([]);
    expect(diff.first_divergence).toBeNull();
    expect(diff.a).toMatchObject({ steps: 0, cost_usd: 0, tokens: 0, duration_ns: null, outcome: 'unknown' });
  });
});
