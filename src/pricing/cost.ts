/**
 * @module pricing/cost
 * What a step and a run cost, in US dollars. A cost nobody can know is `null`, never 0.0
 * (docs/architecture.md, invariant 5): a run priced as free because its model is missing from the table
 * would read as "this run cost nothing", which is wrong.
 *
 * A step:
 * - the metered cost the span reported itself (`cost_usd`), when it has one — always wins;
 * - else, for a model call (`llm`), its tokens times the table's price for its model;
 * - else null: no table, the model is not in it, input or output tokens were not reported,
 *   or the call read/wrote cached tokens the table has no cache price for.
 *
 * Cached tokens follow the OTel GenAI convention, which the normalizer folds every layout to
 * (normalize/usage.ts): `input` includes cache reads and writes, so the uncached part is
 * `input - cache_read - cache_write`. Should cache counts ever exceed the input (counts
 * reported beside it rather than inside it), all of `input` is priced as uncached rather
 * than as a negative amount. An unreported cache count (null) is taken as no caching.
 *
 * A run (`costOfSteps`):
 * - model calls are summed; if any model call's cost is unknown, the run's is unknown (null);
 * - tool steps add their metered cost when they report one (a paid API) and nothing otherwise;
 * - agent steps add nothing: an agent span's cost, when reported, rolls up the model and tool
 *   calls inside it, which are already counted — adding it would count them twice;
 * - a run with no model calls costs 0.0 (known: nothing was spent on models).
 * Totals are rounded to 1e-10 USD so that float noise does not show up in sums and deltas.
 */
import type { Step } from '../normalize/step.js';
import { priceOf, type PricingTable } from './pricing-table.js';

const PER_MILLION = 1_000_000;

/** The cost of one step in USD, or null when it cannot be known. */
export function costOfStep(step: Step, table: PricingTable | null): number | null {
  if (step.cost_usd !== null && Number.isFinite(step.cost_usd)) return step.cost_usd;
  if (step.kind !== 'llm' || table === null || step.model === null) return null;
  const price = priceOf(table, step.model);
  if (price === null) return null;
  const { input, output } = step.tokens;
  if (input === null || output === null) return null;
  const cacheRead = step.tokens.cache_read ?? 0;
  const cacheWrite = step.tokens.cache_write ?? 0;
  if (cacheRead > 0 && price.cache_read === null) return null;
  if (cacheWrite > 0 && price.cache_write === null) return null;
  let uncached = input - cacheRead - cacheWrite;
  if (uncached < 0) uncached = input; // cache counts reported beside input, not inside it
  const usd =
    uncached * price.input +
    cacheRead * (price.cache_read ?? 0) +
    cacheWrite * (price.cache_write ?? 0) +
    output * price.output;
  return usd / PER_MILLION;
}

/**
 * The cost of a run's steps in USD (rules in the module comment), or null when a model
 * call's cost is unknown. `tick` lets a caller with a deadline interrupt a long tape.
 */
export function costOfSteps(
  steps: readonly Step[],
  table: PricingTable | null,
  tick: () => void = () => {},
): number | null {
  let total = 0;
  for (const step of steps) {
    tick();
    if (step.kind === 'agent') continue;
    const cost = costOfStep(step, table);
    if (cost === null) {
      if (step.kind === 'llm') return null;
      continue;
    }
    total += cost;
  }
  return roundUsd(total);
}

/** Rounds to 1e-10 USD; -0 becomes 0. */
export function roundUsd(usd: number): number {
  const rounded = Math.round(usd * 1e10) / 1e10;
  return rounded === 0 ? 0 : rounded;
}
