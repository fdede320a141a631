import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Step, Tokens } from '../../../src/normalize/step.js';
import { costOfStep, costOfSteps } from '../../../src/pricing/cost.js';
import { loadPricingFile, parsePricingTable, priceOf, PricingError } from '../../../src/pricing/pricing-table.js';
import { agentStep, llmStep, toolStep } from '../../fixtures/diff/build.js';

const TABLE = parsePricingTable(
  JSON.stringify({
    note: 'test prices',
    models: {
      'gpt-4o-2024-08-06': { input: 2.5, output: 10, cache_read: 1.25 },
      'gpt-4o*': { input: 5, output: 15 },
      'gpt-4o-mini*': { input: 0.15, output: 0.6, cache_read: 0.075 },
      'claude-sonnet-4-5': { input: 3, output: 15, cache_read: 0.3, cache_write: 3.75 },
    },
  }),
  'prices.json',
);

function call(model: string | null, tokens: Partial<Tokens>, cost_usd: number | null = null): Step {
  const step = llmStep({
    span_id: 's',
    start_ns: 0n,
    end_ns: 1n,
    model: model ?? 'x',
    request: null,
    response: null,
    tokens,
    cost_usd,
  });
  return { ...step, model };
}

describe('parsePricingTable', () => {
  const bad = (text: string) => () => parsePricingTable(text, 'prices.json');

  it('names the file and what is wrong', () => {
    expect(bad('{"models": ')).toThrow(/^pricing table prices.json: is not valid JSON/);
    expect(bad('[]')).toThrow('pricing table prices.json: must be a JSON object {"models": {...}}, got an array');
    expect(bad('{}')).toThrow('"models" must be an object mapping model names to prices, got nothing');
    expect(bad('{"models": {}, "currency": "EUR"}')).toThrow(
      'unknown top-level key "currency"; expected "models" (and optionally "note")',
    );
    expect(bad('{"models": {}, "note": 3}')).toThrow('"note" must be a string, got number 3');
  });

  it('names the bad entry and the bad price', () => {
    expect(bad('{"models": {"gpt-4o": 2.5}}')).toThrow(
      'models["gpt-4o"] must be an object {"input": ..., "output": ...}, got number 2.5',
    );
    expect(bad('{"models": {"gpt-4o": {"input": 2.5}}}')).toThrow(
      'models["gpt-4o"].output is required (USD per million tokens)',
    );
    expect(bad('{"models": {"gpt-4o": {"input": 2.5, "ouput": 10}}}')).toThrow(
      'models["gpt-4o"]: unknown key "ouput"; prices are input, output, cache_read, cache_write',
    );
    expect(bad('{"models": {"gpt-4o": {"input": "2.5", "output": 10}}}')).toThrow(
      'models["gpt-4o"].input must be a number from 0 to 1000000 (USD per million tokens), got "2.5"',
    );
    expect(bad('{"models": {"gpt-4o": {"input": -1, "output": 10}}}')).toThrow(
      'models["gpt-4o"].input must be a number',
    );
    expect(bad('{"models": {"gpt-4o": {"input": 1, "output": 10, "cache_read": true}}}')).toThrow(
      'models["gpt-4o"].cache_read must be a number',
    );
    expect(bad('{"models": {"gpt*4o": {"input": 1, "output": 1}}}')).toThrow(
      'models["gpt*4o"]: "*" may appear only at the end of a name',
    );
    expect(bad('{"models": {"": {"input": 1, "output": 1}}}')).toThrow('models[""]: a model name cannot be empty');
  });

  it('is a PricingError', () => {
    expect(bad('nope')).toThrow(PricingError);
  });

  it('matches exact names first, then the longest prefix pattern', () => {
    expect(priceOf(TABLE, 'gpt-4o-2024-08-06')?.input).toBe(2.5);
    expect(priceOf(TABLE, 'gpt-4o-2024-11-20')?.input).toBe(5);
    expect(priceOf(TABLE, 'gpt-4o-mini-2024-07-18')?.input).toBe(0.15);
    expect(priceOf(TABLE, 'claude-sonnet-4-5-20250929')).toBeNull();
    expect(priceOf(parsePricingTable('{"models": {"*": {"input": 1, "output": 2}}}'), 'anything')?.output).toBe(2);
  });
});

describe('loadPricingFile', () => {
  const dir = mkdtemp(path.join(tmpdir(), 'tapedeck-pricing-'));
  afterAll(async () => rm(await dir, { recursive: true, force: true }));

  it('reads a table from a file and names the file in errors', async () => {
    const file = path.join(await dir, 'prices.json');
    await writeFile(file, '{"models": {"m": {"input": 1, "output": 2}}}');
    expect(priceOf(await loadPricingFile(file), 'm')).toEqual({
      input: 1,
      output: 2,
      cache_read: null,
      cache_write: null,
    });
    await writeFile(file, '{"models": {"m": {"input": 1}}}');
    await expect(loadPricingFile(file)).rejects.toThrow(`pricing table ${file}: models["m"].output is required`);
    await expect(loadPricingFile(path.join(await dir, 'missing.json'))).rejects.toThrow(
      /missing\.json: cannot be read/,
    );
  });
});

describe('costOfStep', () => {
  it('uses the metered cost the span reported, over any table price', () => {
    expect(costOfStep(call('gpt-4o-2024-08-06', { input: 1000, output: 100 }, 0.42), TABLE)).toBe(0.42);
    expect(costOfStep(call('unpriced', { input: null, output: null }, 0.42), null)).toBe(0.42);
  });

  it('prices tokens from the table', () => {
    expect(costOfStep(call('gpt-4o-2024-08-06', { input: 1000, output: 100 }), TABLE)).toBeCloseTo(
      (1000 * 2.5 + 100 * 10) / 1e6,
      15,
    );
  });

  it('is null, never 0, when the cost cannot be known', () => {
    expect(costOfStep(call('gpt-4o-2024-08-06', { input: 1000, output: 100 }), null)).toBeNull(); // no table
    expect(costOfStep(call('unpriced-model', { input: 1000, output: 100 }), TABLE)).toBeNull(); // not in it
    expect(costOfStep(call(null, { input: 1000, output: 100 }), TABLE)).toBeNull(); // no model recorded
    expect(costOfStep(call('gpt-4o-2024-08-06', { input: null, output: 100 }), TABLE)).toBeNull(); // tokens unknown
    expect(costOfStep(call('gpt-4o-2024-08-06', { input: 1000, output: null }), TABLE)).toBeNull();
    expect(costOfStep(call('gpt-4o-2024-08-06', { input: 1000, output: 10, cache_write: 500 }), TABLE)).toBeNull(); // no cache_write price
  });

  it('prices cache reads and writes inside input (the OTel convention) at their own rates', () => {
    const cost = costOfStep(
      call('claude-sonnet-4-5', { input: 1000, output: 10, cache_read: 600, cache_write: 100 }),
      TABLE,
    );
    expect(cost).toBeCloseTo((300 * 3 + 600 * 0.3 + 100 * 3.75 + 10 * 15) / 1e6, 15);
  });

  it('prices all input as uncached when cache counts were reported beside it (larger than input)', () => {
    const cost = costOfStep(call('claude-sonnet-4-5', { input: 20, output: 10, cache_read: 600 }), TABLE);
    expect(cost).toBeCloseTo((20 * 3 + 600 * 0.3 + 10 * 15) / 1e6, 15);
  });

  it('is null for an unmetered tool or agent step', () => {
    expect(
      costOfStep(toolStep({ span_id: 't', start_ns: 0n, end_ns: 1n, tool: 'x', request: null, response: null }), TABLE),
    ).toBeNull();
  });
});

describe('costOfSteps (a run)', () => {
  const priced = call('gpt-4o-2024-08-06', { input: 1000, output: 100 });
  const tool = (cost_usd: number | null) =>
    toolStep({ span_id: 't', start_ns: 0n, end_ns: 1n, tool: 'x', request: null, response: null, cost_usd });
  const agent = agentStep({
    span_id: 'g',
    start_ns: 0n,
    end_ns: 1n,
    agent: 'a',
    request: null,
    response: null,
    cost_usd: 99,
  });

  it('sums model calls and metered tool calls, and skips agent roll-ups', () => {
    expect(costOfSteps([priced, tool(0.01), tool(null), agent, priced], TABLE)).toBeCloseTo(2 * 0.0035 + 0.01, 12);
  });

  it('is null when any model call cannot be priced', () => {
    expect(costOfSteps([priced, call('unpriced', { input: 1, output: 1 })], TABLE)).toBeNull();
  });

  it('is 0.0 for a run without model calls', () => {
    expect(costOfSteps([tool(null)], null)).toBe(0);
    expect(costOfSteps([], null)).toBe(0);
  });

  it('rounds away float noise', () => {
    expect(costOfSteps([call('m', {}, 0.1), call('m', {}, 0.2)], null)).toBe(0.3);
  });
});
