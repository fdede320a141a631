/**
 * @module mcp/tools
 * The MCP server's four read tools (docs/mcp.md): get_run_tape, compare_runs, recall_runs
 * and list_forks. Each gives the same answer as its HTTP route, within the same bounds and
 * one --query-deadline-ms budget per call, and keeps stored text inside the untrusted block
 * (untrusted-text.ts). There is deliberately no replay tool, and this layer cannot import
 * replay/ (.dependency-cruiser.cjs): a model under test that could create a replay would let
 * stored telemetry choose which recording its next run is fed.
 *
 * A failure the caller can act on (an unknown run, bad arguments, a deadline) is a tool
 * result with isError, naming the problem; anything else is logged and answered as internal.
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { type Deadline, startDeadline } from '../deadline/deadline.js';
import { diffRuns } from '../diff/diff-runs.js';
import { loadDiffTape } from '../diff/load-tape.js';
import { DEFAULT_MAX_DIFF_SPANS } from '../diff/types.js';
import { ApiError, classifyError } from '../errors.js';
import type { Logger } from '../logger.js';
import { storedRunId } from '../http/query-params.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { PricingTable } from '../pricing/pricing-table.js';
import { parseTerms } from '../recall/query-terms.js';
import { recall } from '../recall/recall.js';
import { DEFAULT_RECALL_BOUNDS } from '../recall/types.js';
import { readForkRuns } from '../runs/fork-runs.js';
import type { Database } from '../store/database.js';
import { getRun } from '../tapes/run-reader.js';
import { readTape } from '../tapes/tape-service.js';
import { renderTape } from './render-tape.js';
import { wrapUntrusted } from './untrusted-text.js';
import { diffOutputShape, structuredDiff } from './diff-output.js';

export interface McpToolDeps {
  db: Database;
  payloads: PayloadStore;
  pricing: PricingTable | null;
}

export interface McpToolSettings {
  /** --query-deadline-ms: one budget per tool call */
  queryDeadlineMs: number;
  /** --tape-max-bytes: payload bytes get_run_tape inlines */
  tapeMaxBytes: number;
  /** the caller's tenant ('' when tenancy is not in use) */
  tenant: string;
  version: string;
  /** where a failure nobody classified is logged */
  logger?: Logger;
}

export const TOOL_NAMES = ['get_run_tape', 'compare_runs', 'recall_runs', 'list_forks'] as const;

const MAX_FORKS = 100;
const runId = z.string().min(1).max(1024);

export function createMcpServer(deps: McpToolDeps, settings: McpToolSettings): McpServer {
  const server = new McpServer({ name: 'tapedeck', version: settings.version });
  const { tenant } = settings;
  const readOnly = { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false };

  server.registerTool(
    'get_run_tape',
    {
      title: 'Read a run as a tape',
      description:
        "A recorded agent run's steps in order (model calls, tool calls, agent invocations), each with its status, duration, tokens and a one-line preview of its input and output.",
      inputSchema: {
        run: runId.describe('the run id (session id, or trace:<trace_id>)'),
        max_steps: z.number().int().min(1).max(1000).default(100).describe('steps shown, from the first'),
        preview_chars: z.number().int().min(20).max(4000).default(200).describe('characters per preview'),
      },
      annotations: readOnly,
    },
    ({ run, max_steps, preview_chars }) =>
      withDeadline(settings, async (deadline) => {
        const id = storedRunId(run);
        const tape = await readTape(deps, tenant, id, {
          resolve: true,
          maxResolveBytes: settings.tapeMaxBytes,
          signal: deadline.signal,
        });
        if (!tape) throw unknownRun(id);
        deadline.check('rendering the tape');
        const shown = Math.min(max_steps, tape.steps.length);
        return text(
          `Tape of one run: ${shown} of ${tape.steps.length} steps shown.`,
          renderTape(tape, { maxSteps: max_steps, previewChars: preview_chars }),
        );
      }),
  );

  server.registerTool(
    'compare_runs',
    {
      title: 'Compare two runs',
      description:
        'Aligns the steps of run a and run b and names the first step where they diverge and why (input, decision, config or structure), with cost, token, duration and error deltas.',
      inputSchema: { a: runId.describe('run id of side a'), b: runId.describe('run id of side b') },
      outputSchema: diffOutputShape,
      annotations: readOnly,
    },
    ({ a, b }) =>
      withDeadline(settings, async (deadline) => {
        const ids = { a: storedRunId(a), b: storedRunId(b) };
        const limits = { maxSpans: DEFAULT_MAX_DIFF_SPANS, deadline };
        const readA = loadDiffTape(deps, tenant, ids.a, limits);
        const readB = ids.b === ids.a ? readA : loadDiffTape(deps, tenant, ids.b, limits);
        const reads = Promise.all([readA, readB]);
        reads.catch(() => {}); // past the deadline race() answers first; the reads stop on its signal
        const [tapeA, tapeB] = await deadline.race(reads, 'reading the runs');
        if (!tapeA) throw unknownRun(ids.a);
        if (!tapeB) throw unknownRun(ids.b);
        const diff = diffRuns(tapeA, tapeB, { deadline, pricing: deps.pricing, nowNs: nowNs() });
        const structured = structuredDiff(diff);
        const divergence = diff.first_divergence
          ? `first divergence at step a=${diff.first_divergence.a ?? '-'} b=${diff.first_divergence.b ?? '-'} (${diff.first_divergence.kind})`
          : 'no divergence';
        return {
          ...text(
            `Comparison of two runs: ${diff.aligned.length} aligned steps, ${divergence}. The same as structured content:`,
            JSON.stringify(structured, null, 1),
          ),
          structuredContent: structured,
        };
      }),
  );

  server.registerTool(
    'recall_runs',
    {
      title: 'Recall earlier runs',
      description:
        'Earlier runs whose recorded text holds every word of the query (whole words, any order), successful runs first, each with its outcome and skeleton (the step signatures it went through).',
      inputSchema: {
        q: z.string().min(1).max(1024).describe('words to look for'),
        outcome: z.enum(['success', 'failure', 'any']).default('any').describe('keep only runs that ended this way'),
        limit: z.number().int().min(1).max(DEFAULT_RECALL_BOUNDS.maxRunsRead).default(10).describe('runs answered'),
      },
      annotations: readOnly,
    },
    ({ q, outcome, limit }) =>
      withDeadline(settings, async (deadline) => {
        const terms = parseTerms(q, DEFAULT_RECALL_BOUNDS.maxQueryTerms);
        const result = await recall(
          deps,
          { tenant, terms, outcome, limit },
          { deadline, nowNs: nowNs(), bounds: DEFAULT_RECALL_BOUNDS },
        );
        const lines = result.runs.map((r) =>
          [
            `run ${JSON.stringify(r.run)}: outcome=${r.outcome} matching spans=${r.score} steps=${r.steps} cost_usd=${r.cost_usd ?? 'unknown'}${r.truncated ? ' (only its beginning was read)' : ''}`,
            `   skeleton: ${r.skeleton.join(' → ')}${r.skeleton_truncated ? ' …' : ''}`,
            ...(r.cause ? [`   failed at step ${r.cause.index} (${r.cause.signature})`] : []),
          ].join('\n'),
        );
        const notes = [
          result.truncated ? 'More runs matched than were read; add words to narrow the query.' : '',
          result.unindexed_steps > 0 ? `${result.unindexed_steps} recent steps were not searched yet.` : '',
        ].filter(Boolean);
        return text(
          `Recall: ${result.runs.length} runs, best first.${notes.length ? ` ${notes.join(' ')}` : ''}`,
          lines.length ? lines.join('\n') : '(no run matched)',
        );
      }),
  );

  server.registerTool(
    'list_forks',
    {
      title: "List a run's forks",
      description:
        'The runs forked from a run (replayed up to a step, then an edited answer, then a live model), each with the step where it parted from the run.',
      inputSchema: { run: runId.describe('the origin run id') },
      annotations: readOnly,
    },
    ({ run }) =>
      withDeadline(settings, async (deadline) => {
        const id = storedRunId(run);
        if (!(await getRun(deps.db, tenant, id, { signal: deadline.signal }))) throw unknownRun(id);
        const page = await readForkRuns(deps.db, tenant, id, MAX_FORKS, { signal: deadline.signal });
        const lines = page.forks.map(
          (f) =>
            `fork ${JSON.stringify(f.run)}: parted at step ${f.at_step}, started ${new Date(Number(f.first_start_ns / 1_000_000n)).toISOString()}, ${f.spans} spans`,
        );
        return text(
          `Forks of one run: ${page.forks.length}${page.truncated ? ` (the first ${MAX_FORKS}; there are more)` : ''}.`,
          [`origin ${JSON.stringify(id)}`, ...(lines.length ? lines : ['(no forks)'])].join('\n'),
        );
      }),
  );

  return server;
}

const nowNs = () => BigInt(Date.now()) * 1_000_000n;

function unknownRun(run: string): ApiError {
  return new ApiError('not_found', `no run ${JSON.stringify(run)}`);
}

/** A result: a line of tapedeck's own, then the stored text inside the untrusted block. */
function text(summary: string, stored: string): CallToolResult {
  return { content: [{ type: 'text', text: `${summary}\n${wrapUntrusted(stored)}` }] };
}

/** Runs a tool call within one deadline; an ApiError becomes an isError result naming it. */
async function withDeadline(
  settings: McpToolSettings,
  work: (deadline: Deadline) => Promise<CallToolResult>,
): Promise<CallToolResult> {
  const deadline = startDeadline(settings.queryDeadlineMs);
  try {
    return await work(deadline);
  } catch (error) {
    const classified = classifyError(error);
    if (classified.type === 'internal') settings.logger?.error({ err: error }, 'MCP tool call failed');
    // The message may quote the caller's own arguments, never stored text.
    const retry = classified.retryAfterSeconds === undefined ? '' : ` (retry in ${classified.retryAfterSeconds} s)`;
    return { isError: true, content: [{ type: 'text', text: `${classified.type}: ${classified.message}${retry}` }] };
  } finally {
    deadline.release();
  }
}
