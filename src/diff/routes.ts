/**
 * @module diff/routes
 * `GET /v1/diff?a=<run>&b=<run>`: compares two runs (docs/api.md).
 *
 * - 400 `bad_input` when a or b is missing, empty or longer than 1,024 characters.
 * - 404 `not_found` when either run does not exist for the caller's tenant (a run of another
 *   tenant is indistinguishable from one that does not exist).
 * - 400 `deadline_exceeded` when reading both runs and diffing them does not fit in the
 *   request's `--query-deadline-ms` budget (http/deadline-middleware.ts). The reads are raced
 *   against it, so the answer is on time even if a read ignores its signal; once the handler
 *   returns, the released deadline aborts any read still in flight.
 * - 200 with the RunDiff, keys sorted (renderJson), nanoseconds as exact integers.
 */
import { Hono, type Context } from 'hono';
import { renderJson } from '../json/canonical.js';
import type { Deadline } from '../deadline/deadline.js';
import { allow } from '../auth/route-auth.js';
import { ApiError } from '../errors.js';
import { deadlineOf, requestDeadline } from '../http/deadline-middleware.js';
import { storedRunId } from '../http/query-params.js';
import type { PricingTable } from '../pricing/pricing-table.js';
import { diffRuns } from './diff-runs.js';
import { DEFAULT_MAX_DIFF_SPANS, DEFAULT_MAX_DIFF_STEPS, type DiffTape } from './types.js';

export interface DiffDeps {
  /** Reads a run's tape, at most maxSpans spans (saying truncated past them); undefined when
   * the run does not exist for this tenant. Should pass deadline.signal to its queries. */
  loadTape(
    run: string,
    tenant: string | null,
    opts: { maxSpans: number; deadline: Deadline },
  ): Promise<DiffTape | undefined>;
}

export interface DiffRouteSettings {
  /** --query-deadline-ms */
  queryDeadlineMs: number;
  /** --pricing, loaded; null when not configured */
  pricing: PricingTable | null;
  /** steps compared per side (default 5,000) */
  maxSteps?: number;
  /** spans read per side (default 50,000) */
  maxSpans?: number;
  /** wall clock in Unix nanoseconds (tests fix it) */
  nowNs?: () => bigint;
  /** the caller's tenant (from authentication); null: the operator view. Default null. */
  tenantOf?: (c: Context) => string | null;
}

export const MAX_RUN_ID_CHARS = 1024;

export function createDiffRoutes(deps: DiffDeps, settings: DiffRouteSettings): Hono {
  const app = new Hono();
  const maxSpans = settings.maxSpans ?? DEFAULT_MAX_DIFF_SPANS;
  const maxSteps = settings.maxSteps ?? DEFAULT_MAX_DIFF_STEPS;
  const nowNs = settings.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);

  app.get('/v1/diff', allow.read, requestDeadline(settings.queryDeadlineMs), async (c) => {
    const runs = { a: c.req.query('a'), b: c.req.query('b') };
    for (const side of ['a', 'b'] as const) {
      const run = runs[side];
      if (run === undefined || run === '') {
        throw new ApiError('bad_input', `missing run ${side}: GET /v1/diff?a=<run>&b=<run> compares run a with run b`);
      }
      if (run.length > MAX_RUN_ID_CHARS) {
        throw new ApiError(
          'bad_input',
          `run ${side} is ${run.length} characters long; a run id has at most ${MAX_RUN_ID_CHARS}`,
        );
      }
    }
    const a = storedRunId(runs.a as string);
    const b = storedRunId(runs.b as string);
    const tenant = settings.tenantOf ? settings.tenantOf(c) : null;
    const deadline = deadlineOf(c);
    const readA = deps.loadTape(a, tenant, { maxSpans, deadline });
    const readB = b === a ? readA : deps.loadTape(b, tenant, { maxSpans, deadline });
    const [tapeA, tapeB] = await deadline.race(Promise.all([readA, readB]), 'reading the runs');
    if (tapeA === undefined) throw new ApiError('not_found', `run a (${JSON.stringify(a)}) was not found`);
    if (tapeB === undefined) throw new ApiError('not_found', `run b (${JSON.stringify(b)}) was not found`);
    const diff = diffRuns(tapeA, tapeB, { deadline, pricing: settings.pricing, nowNs: nowNs(), maxSteps });
    return c.body(renderJson(diff), 200, { 'content-type': 'application/json; charset=utf-8' });
  });
  return app;
}
