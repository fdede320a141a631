/**
 * @module recall/routes
 * `GET /v1/recall?q=<words>&outcome=success|failure|any&limit=<n>`: earlier runs whose
 * recorded text holds every word (docs/api.md).
 *
 * - 200 `{"runs": [...], "truncated": bool}`, keys sorted (renderJson), nanoseconds exact;
 *   each run as in recall/types.ts. `limit` (1 to maxRunsRead, default maxRunsRead) cuts the
 *   ranked list; `outcome` (default any) keeps only runs that ended that way.
 * - 400 `bad_input`: q missing, empty, longer than 1,024 characters, without a single word,
 *   with more than 32 words or a word longer than 100 characters (words that long are not
 *   indexed); an outcome other than success, failure or any; a bad limit.
 * - 400 `query_too_broad`: the words match more than maxTotalMatches (200,000) spans; the
 *   message names them.
 * - 400 `deadline_exceeded`: the work did not fit in the request's `--query-deadline-ms`
 *   budget (http/deadline-middleware.ts).
 */
import { Hono, type Context } from 'hono';
import { allow } from '../auth/route-auth.js';
import { ApiError } from '../errors.js';
import { deadlineOf, requestDeadline } from '../http/deadline-middleware.js';
import { parseLimit } from '../http/query-params.js';
import { renderJson } from '../json/canonical.js';
import { parseTerms } from './query-terms.js';
import { recall, type RecallDeps } from './recall.js';
import { DEFAULT_RECALL_BOUNDS, type OutcomeFilter, type RecallBounds } from './types.js';

export interface RecallRouteSettings extends Partial<RecallBounds> {
  /** --query-deadline-ms */
  queryDeadlineMs: number;
  /** wall clock in Unix nanoseconds (tests fix it) */
  nowNs?: () => bigint;
  /** the caller's tenant (from authentication); null: no tenant. Default null. */
  tenantOf?: (c: Context) => string | null;
}

const OUTCOMES: readonly OutcomeFilter[] = ['success', 'failure', 'any'];

export function createRecallRoutes(deps: RecallDeps, settings: RecallRouteSettings): Hono {
  const bounds = boundsOf(settings);
  const nowNs = settings.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
  const app = new Hono();

  app.get('/v1/recall', allow.read, requestDeadline(settings.queryDeadlineMs), async (c) => {
    const terms = parseTerms(c.req.query('q'), bounds.maxQueryTerms);
    const outcome = parseOutcome(c.req.query('outcome'));
    const max = bounds.maxRunsRead;
    const limit = parseLimit(c.req.query('limit'), 'limit', { fallback: max, min: 1, max });
    const tenant = (settings.tenantOf ? settings.tenantOf(c) : null) ?? '';
    const deadline = deadlineOf(c);
    const result = await recall(deps, { tenant, terms, outcome, limit }, { deadline, nowNs: nowNs(), bounds });
    deadline.check('answering');
    return c.body(renderJson(result), 200, { 'content-type': 'application/json; charset=utf-8' });
  });
  return app;
}

function boundsOf(settings: RecallRouteSettings): RecallBounds {
  const bounds = { ...DEFAULT_RECALL_BOUNDS };
  for (const key of Object.keys(bounds) as (keyof RecallBounds)[]) {
    const value = settings[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < 1)
      throw new RangeError(`recall setting ${key} must be a whole number >= 1, got ${value}`);
    bounds[key] = value;
  }
  return bounds;
}

function parseOutcome(value: string | undefined): OutcomeFilter {
  if (value === undefined || value === '') return 'any';
  if ((OUTCOMES as readonly string[]).includes(value)) return value as OutcomeFilter;
  throw new ApiError('bad_input', `outcome must be success, failure or any, got ${JSON.stringify(value)}`);
}
