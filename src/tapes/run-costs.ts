/**
 * @module tapes/run-costs
 * cost_usd of several runs at once, by the pricing rules of pricing/cost.ts (metered cost
 * first, else tokens × the --pricing table; unknown stays null), from the steps' model,
 * tokens and metered cost only, so a page of runs costs one query. Reads run_steps, where a
 * model call recorded by two nested spans counts once (0002_views.sql).
 */
import type { Queryable } from '../store/database.js';
import type { Step } from '../normalize/step.js';
import { costOfSteps } from '../pricing/cost.js';
import type { PricingTable } from '../pricing/pricing-table.js';

interface CostRow {
  run: string;
  kind: Step['kind'];
  model: string | null;
  tokens_input: bigint | null;
  tokens_output: bigint | null;
  tokens_cache_read: bigint | null;
  tokens_cache_write: bigint | null;
  cost_usd: number | null;
}

const n = (v: bigint | null) => (v === null ? null : Number(v));

export async function runCosts(
  db: Queryable,
  tenant: string,
  runs: readonly string[],
  pricing: PricingTable | null,
): Promise<Map<string, number | null>> {
  const out = new Map<string, number | null>();
  if (runs.length === 0) return out;
  const rows = await db.query<CostRow>(
    `SELECT run_id AS run, kind, model, tokens_input, tokens_output, tokens_cache_read, tokens_cache_write, cost_usd
       FROM tapedeck_store.run_steps
      WHERE tenant = $1 AND run_id = ANY($2::text[])`,
    [tenant, runs],
  );
  const stepsByRun = new Map<string, Step[]>(runs.map((r) => [r, []]));
  for (const r of rows) {
    // Only the fields the pricing rules read; the rest of a step plays no part in its cost.
    stepsByRun.get(r.run)?.push({
      kind: r.kind,
      model: r.model,
      cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
      tokens: {
        input: n(r.tokens_input),
        output: n(r.tokens_output),
        cache_read: n(r.tokens_cache_read),
        cache_write: n(r.tokens_cache_write),
        context: null,
      },
    } as Step);
  }
  for (const [run, steps] of stepsByRun) out.set(run, costOfSteps(steps, pricing));
  return out;
}

/** A page of run summaries with cost_usd added to each. */
export async function withCosts<R extends { run: string }>(
  db: Queryable,
  tenant: string,
  runs: readonly R[],
  pricing: PricingTable | null,
): Promise<(R & { cost_usd: number | null })[]> {
  const costs = await runCosts(
    db,
    tenant,
    runs.map((r) => r.run),
    pricing,
  );
  return runs.map((r) => ({ ...r, cost_usd: costs.get(r.run) ?? null }));
}
