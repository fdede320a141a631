/**
 * @module api/run-routes
 * Rebuilding runs from what is stored, with no model call:
 * - `GET /v1/runs/{run}/reconstruct`: the run's prompt, final answer, tool calls and status
 *   (runs/reconstruct.ts). 404 `not_found` when there is no such run.
 * - `GET /v1/runs/{run}/tree?max_depth=&max_children=&max_runs=`: the run and every
 *   descendant run, each reconstructed, children in start order (runs/tree.ts; defaults 8,
 *   100, 500; at most 64, 1000, 2000). 404 when there is no such run.
 * - `GET /v1/datasets/chat.jsonl?since=&until=&outcome=success|failure|any`: completed runs
 *   as chat-format JSONL, streamed (`application/x-ndjson`) with bounded memory
 *   (runs/dataset.ts). `since`/`until`: ISO 8601 or Unix ns, on the run's start, until
 *   exclusive; outcome defaults to success. `&summary=true` answers the counts instead, as
 *   JSON: `{considered, exported, skipped: {reason: n}}` for the same filters.
 * Reconstruct, tree and summary spend one `--query-deadline-ms` budget (400
 * `deadline_exceeded` past it). The JSONL stream is an export: it is not cut by the budget,
 * holds one page of runs and one tape at a time, and stops when the client goes away.
 */
import { Hono } from 'hono';
import type { Config } from '../config.js';
import { Deadline } from '../deadline/deadline.js';
import { ApiError } from '../errors.js';
import type { Store } from '../store/open-store.js';
import { chatDatasetLines, emptySummary, summarizeChatDataset, type DatasetFilter } from '../runs/dataset.js';
import { datasetFilterOf, DatasetFilterError } from '../runs/dataset-filter.js';
import { reconstructStoredRun } from '../runs/run-service.js';
import { buildRunTree, DEFAULT_TREE_LIMITS, TREE_LIMIT_CEILINGS, type TreeLimits } from '../runs/tree.js';
import { jsonResponse } from './app.js';

const tenant = '';

export function createRunRoutes(store: Store, config: Config): Hono {
  const app = new Hono();

  app.get('/v1/runs/:run/reconstruct', async (c) => {
    const run = c.req.param('run');
    const deadline = new Deadline(config.queryDeadlineMs, { signal: c.req.raw.signal });
    try {
      const rec = await deadline.race(
        reconstructStoredRun(store, tenant, run, { maxResolveBytes: config.tapeMaxBytes, signal: deadline.signal }),
        'reconstructing the run',
      );
      if (!rec) throw new ApiError(404, 'not_found', `no run ${JSON.stringify(run)}`);
      return jsonResponse(rec);
    } finally {
      deadline.release();
    }
  });

  app.get('/v1/runs/:run/tree', async (c) => {
    const run = c.req.param('run');
    const limits: TreeLimits = {
      maxDepth: parseLimit(
        c.req.query('max_depth'),
        'max_depth',
        DEFAULT_TREE_LIMITS.maxDepth,
        TREE_LIMIT_CEILINGS.maxDepth,
        0,
      ),
      maxChildren: parseLimit(
        c.req.query('max_children'),
        'max_children',
        DEFAULT_TREE_LIMITS.maxChildren,
        TREE_LIMIT_CEILINGS.maxChildren,
        1,
      ),
      maxRuns: parseLimit(
        c.req.query('max_runs'),
        'max_runs',
        DEFAULT_TREE_LIMITS.maxRuns,
        TREE_LIMIT_CEILINGS.maxRuns,
        1,
      ),
    };
    const deadline = new Deadline(config.queryDeadlineMs, { signal: c.req.raw.signal });
    try {
      const tree = await buildRunTree(store, tenant, run, { limits, maxResolveBytes: config.tapeMaxBytes, deadline });
      if (!tree) throw new ApiError(404, 'not_found', `no run ${JSON.stringify(run)}`);
      return jsonResponse(tree);
    } finally {
      deadline.release();
    }
  });

  app.get('/v1/datasets/chat.jsonl', async (c) => {
    const filter = parseDatasetFilter({
      since: c.req.query('since'),
      until: c.req.query('until'),
      outcome: c.req.query('outcome'),
    });
    const summaryOnly = parseBoolean(c.req.query('summary'), 'summary');
    if (summaryOnly) {
      const deadline = new Deadline(config.queryDeadlineMs, { signal: c.req.raw.signal });
      try {
        const summary = await deadline.race(
          summarizeChatDataset(store, tenant, filter, {
            maxResolveBytes: config.tapeMaxBytes,
            signal: deadline.signal,
          }),
          'counting the dataset',
        );
        return jsonResponse(summary);
      } finally {
        deadline.release();
      }
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

function parseDatasetFilter(raw: { since?: string; until?: string; outcome?: string }): DatasetFilter {
  try {
    return datasetFilterOf(raw);
  } catch (error) {
    if (error instanceof DatasetFilterError) throw new ApiError(400, 'bad_input', error.message);
    throw error;
  }
}

function parseBoolean(value: string | undefined, name: string): boolean {
  if (value === undefined || value === '' || value === 'false' || value === '0') return false;
  if (value === 'true' || value === '1') return true;
  throw new ApiError(400, 'bad_input', `${name} must be true or false, got ${JSON.stringify(value)}`);
}

function parseLimit(value: string | undefined, name: string, fallback: number, ceiling: number, floor: number): number {
  if (value === undefined || value === '') return fallback;
  if (!/^\d+$/.test(value) || Number(value) < floor || Number(value) > ceiling) {
    throw new ApiError(
      400,
      'bad_input',
      `${name} must be a whole number from ${floor} to ${ceiling}, got ${JSON.stringify(value)}`,
    );
  }
  return Number(value);
}
