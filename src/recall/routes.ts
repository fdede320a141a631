/**
 * @module recall/routes
 * `GET /v1/recall?q=<words>&outcome=success|failure|any&limit=<n>` (docs/api.md).
 *
 * - 200 `{"runs": [...], "truncated": bool}`, keys sorted (renderJson), nanoseconds exact;
 *   each run as in recall/types.ts. `limit` (1 to maxRunsRead, default maxRunsRead) cuts the
 *   ranked list; `outcome` (default any) keeps only runs that ended that way.
 * - 400 `bad_input`: q missing, empty, longer than 1,024 characters, without a single word,
 *   with more than 32 words or a word longer than 100 characters (words that long are not
 *   indexed); an outcome other than success, failure or any; a bad limit.
 * - 400 `query_too_broad`: the words match more than maxTotalMatches (200,000) spans; the
 *   message names them.
 * - 400 `deadline_exceeded`: the work did not fit in one `--query-deadline-ms` budget. The
 *   budget starts with the handler; when the handler returns, whatever it returned, the
 *   deadline is released, which aborts any read still in flight and stops any loop holding it.
 */
import { Hono, type Context } from 'hono';
import { Deadline } from '../deadline/deadline.js';
import { ApiError } from '../errors.js';
import { renderJson } from '../json/canonical.js';
import { recall, type RecallDeps } from './recall.js';
import { MAX_TOKEN_CHARS, queryTerms, type Term } from './tokenize.js';
import { DEFAULT_RECALL_BOUNDS, type OutcomeFilter, type RecallBounds } from './types.js';

export interface RecallRouteSettings extends Partial<RecallBounds> {
  /** --query-deadline-ms */
  queryDeadlineMs: number;
  /** wall clock in Unix nanoseconds (tests fix it) */
  nowNs?: () => bigint;
  /** the caller's tenant (from authentication); null: no tenant. Default null. */
  tenantOf?: (c: Context) => string | null;
}

export const MAX_QUERY_CHARS = 1024;
const OUTCOMES: readonly OutcomeFilter[] = ['success', 'failure', 'any'];

export function createRecallRoutes(deps: RecallDeps, settings: RecallRouteSettings): Hono {
  const bounds = boundsOf(settings);
  const nowNs = settings.nowNs ?? (() => BigInt(Date.now()) * 1_000_000n);
  const app = new Hono();

  app.get('/v1/recall', async (c) => {
    let deadline: Deadline | undefined;
    try {
      const terms = parseTerms(c.req.query('q'), bounds.maxQueryTerms);
      const outcome = parseOutcome(c.req.query('outcome'));
      const limit = parseLimit(c.req.query('limit'), bounds.maxRunsRead);
      const tenant = (settings.tenantOf ? settings.tenantOf(c) : null) ?? '';
      deadline = new Deadline(settings.queryDeadlineMs, { signal: c.req.raw.signal });
      const result = await recall(deps, { tenant, terms, outcome, limit }, { deadline, nowNs: nowNs(), bounds });
      deadline.check('answering');
      return c.body(renderJson(result), 200, { 'content-type': 'application/json; charset=utf-8' });
    } catch (error) {
      if (error instanceof ApiError && error.status === 400) return fail(c, error.type, error.message);
      throw error;
    } finally {
      deadline?.release();
    }
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

export function parseTerms(q: string | undefined, maxTerms: number): Term[] {
  if (q === undefined || q.trim() === '') {
    throw badInput('missing q: GET /v1/recall?q=<words> finds earlier runs whose recorded text holds every word');
  }
  if (q.length > MAX_QUERY_CHARS)
    throw badInput(`q is ${q.length} characters long; a recall query has at most ${MAX_QUERY_CHARS}`);
  const terms = queryTerms(q);
  if (terms.length === 0) throw badInput(`q ${JSON.stringify(q)} holds no words (letters or digits) to look for`);
  if (terms.length > maxTerms)
    throw badInput(`q holds ${terms.length} different words; a recall query has at most ${maxTerms}`);
  const long = terms.find((t) => t.kind === 'word' && t.text.length > MAX_TOKEN_CHARS);
  if (long) {
    throw badInput(
      `the word ${JSON.stringify(long.text.slice(0, 40))}… is ${long.text.length} characters long; ` +
        `words longer than ${MAX_TOKEN_CHARS} are not indexed, so recall cannot find them`,
    );
  }
  return terms;
}

function parseOutcome(value: string | undefined): OutcomeFilter {
  if (value === undefined || value === '') return 'any';
  if ((OUTCOMES as readonly string[]).includes(value)) return value as OutcomeFilter;
  throw badInput(`outcome must be success, failure or any, got ${JSON.stringify(value)}`);
}

function parseLimit(value: string | undefined, max: number): number {
  if (value === undefined || value === '') return max;
  if (!/^\d+$/.test(value) || Number(value) < 1 || Number(value) > max) {
    throw badInput(`limit must be a whole number from 1 to ${max}, got ${JSON.stringify(value)}`);
  }
  return Number(value);
}

function badInput(message: string): ApiError {
  return new ApiError(400, 'bad_input', message);
}

function fail(c: Context, type: string, message: string): Response {
  return c.body(renderJson({ error: { type, message } }), 400, { 'content-type': 'application/json; charset=utf-8' });
}
