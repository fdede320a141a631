/**
 * @module api/run-routes
 * Rebuilding runs from what is stored, with no model call:
 * - `GET /v1/runs/{run}/reconstruct`: the run's prompt, final answer, tool calls and status
 *   (runs/reconstruct.ts). 404 `not_found` when there is no such run.
 * - `GET /v1/runs/{run}/tree?max_depth=&max_children=&max_runs=`: the run and every
 *   descendant run, each reconstructed, children in start order (runs/tree.ts; defaults 8,
 *   100, 500; at most 64, 1000, 2000). 404 when there is no such run.
 * - `GET /v1/datasets/chat.jsonl?since=&until=&outcome=success|failure|any&merge_user_turns=`:
 *   completed runs as chat-format JSONL, streamed (`application/x-ndjson`) with bounded memory
 *   (runs/dataset.ts). `since`/`until`: ISO 8601 or Unix ns, on the run's start, until
 *   exclusive; outcome defaults to success; `merge_user_turns=true` joins consecutive user
 *   turns into one (written as recorded by default). `&summary=true` answers the counts
 *   instead, as JSON: `{considered, exported, skipped: {reason: n}}` for the same filters.
 * - `GET /v1/runs/{run}/forks?limit=`: the runs forked from it and the step where each parted
 *   (runs/fork-runs.ts; docs/forks.md), earliest first, at most limit (default 100, at most
 *   1000), `truncated` past it. 404 when there is no such run.
 * Reconstruct, tree, forks and summary spend one `--query-deadline-ms` budget (400
 * `deadline_exceeded` past it). The JSONL stream is an export: it is not cut by the budget,
 * holds one page of runs and one tape at a time, and stops when the client goes away.
 */
import { Hono } from 'hono';
import { tenantOf } from '../auth/access.js';
import { allow } from '../auth/route-auth.js';
import type { Config } from '../config.js';
import { ApiError } from '../errors.js';
import type { Store } from '../open-store.js';
import { chatDatasetLines, emptySummary, summarizeChatDataset, type DatasetFilter } from '../runs/dataset.js';
import { datasetFilterOf, DatasetFilterError } from '../runs/dataset-filter.js';
import { reconstructStoredRun } from '../runs/run-service.js';
import { readForkRuns } from '../runs/fork-runs.js';
import { getRun } from '../tapes/run-reader.js';
import { buildRunTree, DEFAULT_TREE_LIMITS, TREE_LIMIT_CEILINGS, type TreeLimits } from '../runs/tree.js';
import { deadlineOf, requestDeadline } from '../http/deadline-middleware.js';
import { jsonResponse } from '../http/json-response.js';
import { parseBoolean, parseLimit, storedRunId } from '../http/query-params.js';

export function createRunRoutes(store: Store, config: Config): Hono {
  const app = new Hono();
  const withDeadline = requestDeadline(config.queryDeadlineMs);

  app.get('/v1/runs/:run/reconstruct', allow.read, withDeadline, async (c) => {
    const tenant = tenantOf(c);
    const run = storedRunId(c.req.param('run'));
    const deadline = deadlineOf(c);
    const rec = await deadline.race(
      reconstructStoredRun(store, tenant, run, { maxResolveBytes: config.tapeMaxBytes, signal: deadline.signal }),
      'reconstructing the run',
    );
    if (!rec) throw new ApiError('not_found', `no run ${JSON.stringify(run)}`);
    return jsonResponse(rec);
  });

  app.get('/v1/runs/:run/forks', allow.read, withDeadline, async (c) => {
    const tenant = tenantOf(c);
    const run = storedRunId(c.req.param('run'));
    const limit = parseLimit(c.req.query('limit'), 'limit', { fallback: 100, min: 1, max: 1000 });
    const { signal } = deadlineOf(c);
    if (!(await getRun(store.db, tenant, run, { signal })))
      throw new ApiError('not_found', `no run ${JSON.stringify(run)}`);
    const page = await readForkRuns(store.db, tenant, run, limit, { signal });
    return jsonResponse({ run, ...page });
  });

  app.get('/v1/runs/:run/tree', allow.read, withDeadline, async (c) => {
    const tenant = tenantOf(c);
    const run = storedRunId(c.req.param('run'));
    const limit = (name: string, fallback: number, min: number, max: number) =>
      parseLimit(c.req.query(name), name, { fallback, min, max });
    const limits: TreeLimits = {
      maxDepth: limit('max_depth', DEFAULT_TREE_LIMITS.maxDepth, 0, TREE_LIMIT_CEILINGS.maxDepth),
      maxChildren: limit('max_children', DEFAULT_TREE_LIMITS.maxChildren, 1, TREE_LIMIT_CEILINGS.maxChildren),
      maxRuns: limit('max_runs', DEFAULT_TREE_LIMITS.maxRuns, 1, TREE_LIMIT_CEILINGS.maxRuns),
    };
    const deadline = deadlineOf(c);
    const tree = await buildRunTree(store, tenant, run, { limits, maxResolveBytes: config.tapeMaxBytes, deadline });
    if (!tree) throw new ApiError('not_found', `no run ${JSON.stringify(run)}`);
    return jsonResponse(tree);
  });

  // The JSONL export is not cut by the budget; only its summary spends it.
  app.get('/v1/datasets/chat.jsonl', allow.read, withDeadline, async (c) => {
    const tenant = tenantOf(c);
    const filter = parseDatasetFilter({
      since: c.req.query('since'),
      until: c.req.query('until'),
      outcome: c.req.query('outcome'),
      mergeUserTurns: parseBoolean(c.req.query('merge_user_turns'), 'merge_user_turns'),
    });
    const summaryOnly = parseBoolean(c.req.query('summary'), 'summary');
    if (summaryOnly) {
      const deadline = deadlineOf(c);
      const summary = await deadline.race(
        summarizeChatDataset(store, tenant, filter, { maxResolveBytes: config.tapeMaxBytes, signal: deadline.signal }),
        'counting the dataset',
      );
      return jsonResponse(summary);
    }
    const lines = chatDatasetLines(store, tenant, filter, emptySummary(), {
      maxResolveBytes: config.tapeMaxBytes,
      signal: c.req.raw.signal,
    });
    // The first line is read before answering, so a store that cannot be read gets an error
    // status instead of an empty 200.
    const first = await lines.next();
    const encoder = new TextEncoder();
    let pendingFirst: string | undefined = first.done ? undefined : first.value;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (pendingFirst !== undefined) {
          controller.enqueue(encoder.encode(pendingFirst));
          pendingFirst = undefined;
          return;
        }
        const next = first.done ? { done: true as const, value: undefined } : await lines.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(next.value));
      },
      async cancel() {
        await lines.return(undefined);
      },
    });
    return new Response(body, { status: 200, headers: { 'content-type': 'application/x-ndjson; charset=utf-8' } });
  });

  return app;
}

function parseDatasetFilter(raw: Parameters<typeof datasetFilterOf>[0]): DatasetFilter {
  try {
    return datasetFilterOf(raw);
  } catch (error) {
    if (error instanceof DatasetFilterError) throw new ApiError('bad_input', error.message);
    throw error;
  }
}
