/**
 * `tapedeck diff A B` and `tapedeck recall WORDS...`: the same answers as GET /v1/diff and
 * GET /v1/recall, within --query-deadline-ms.
 */
import type { Command } from 'commander';
import { renderJson } from '../json/canonical.js';
import { startDeadline } from '../deadline/deadline.js';
import { diffRuns } from '../diff/diff-runs.js';
import { loadDiffTape } from '../diff/load-tape.js';
import { DEFAULT_MAX_DIFF_SPANS } from '../diff/types.js';
import { CliError, EXIT } from './cli-error.js';
import { print, withStore } from './context.js';
import { addConfigOptions } from './flags.js';
import { formatDiff, formatRecall } from './format-compare.js';
import { ApiError } from '../errors.js';
import { recall } from '../recall/recall.js';
import { parseTerms } from '../recall/query-terms.js';
import { DEFAULT_RECALL_BOUNDS, type OutcomeFilter } from '../recall/types.js';

export function registerCompareCommands(program: Command): void {
  addConfigOptions(program.command('diff').description('compare two runs and name where they first diverge'))
    .argument('<a>', 'run id')
    .argument('<b>', 'run id')
    .option('--query-deadline-ms <n>', 'budget for reading and comparing (default 10000)')
    .option('--pricing <file>', 'per-model price table (JSON)')
    .option('--json', 'print JSON')
    .action(async (a: string, b: string, options: Record<string, string | boolean>) => {
      await withStore(options, async (store, config) => {
        const deadline = startDeadline(config.queryDeadlineMs);
        try {
          const limits = { maxSpans: DEFAULT_MAX_DIFF_SPANS, deadline };
          const readA = loadDiffTape(store, '', a, limits);
          const readB = b === a ? readA : loadDiffTape(store, '', b, limits);
          const reads = Promise.all([readA, readB]);
          // Past the deadline race() throws before it attaches to `reads`, and the store then
          // closes under a read still running: that rejection must not crash the process.
          reads.catch(() => {});
          const [tapeA, tapeB] = await deadline.race(reads, 'reading the runs');
          if (!tapeA) throw new CliError(`no run ${JSON.stringify(a)}`, EXIT.notFound);
          if (!tapeB) throw new CliError(`no run ${JSON.stringify(b)}`, EXIT.notFound);
          const diff = diffRuns(tapeA, tapeB, {
            deadline,
            pricing: store.pricing,
            nowNs: BigInt(Date.now()) * 1_000_000n,
          });
          print(options.json ? renderJson(diff, 2) : formatDiff(diff));
        } catch (error) {
          // Past --query-deadline-ms: exit 2 with the message, as recall does (GET /v1/diff answers 400).
          if (error instanceof ApiError && error.status === 400) throw new CliError(error.message, EXIT.usage);
          throw error;
        } finally {
          deadline.release();
        }
      });
    });

  addConfigOptions(program.command('recall').description('find earlier runs whose recorded text holds every word'))
    .argument('<words...>', 'words to look for (whole words, any order, any case)')
    .option('--outcome <outcome>', 'success, failure or any', 'any')
    .option('--limit <n>', 'runs to show', '20')
    .option('--query-deadline-ms <n>', 'budget for the search (default 10000)')
    .option('--json', 'print JSON')
    .action(async (words: string[], options: Record<string, string | boolean>) => {
      const outcome = String(options.outcome);
      if (!['success', 'failure', 'any'].includes(outcome))
        throw new CliError('--outcome must be success, failure or any', EXIT.usage);
      const limit = /^\d+$/.test(String(options.limit)) ? Number(options.limit) : NaN;
      if (!Number.isInteger(limit) || limit < 1 || limit > DEFAULT_RECALL_BOUNDS.maxRunsRead) {
        throw new CliError(`--limit must be a whole number from 1 to ${DEFAULT_RECALL_BOUNDS.maxRunsRead}`, EXIT.usage);
      }
      await withStore(options, async (store, config) => {
        const deadline = startDeadline(config.queryDeadlineMs);
        try {
          const terms = parseTerms(words.join(' '), DEFAULT_RECALL_BOUNDS.maxQueryTerms);
          const result = await recall(
            { db: store.db, payloads: store.payloads, pricing: store.pricing },
            { tenant: '', terms, outcome: outcome as OutcomeFilter, limit },
            { deadline, nowNs: BigInt(Date.now()) * 1_000_000n, bounds: DEFAULT_RECALL_BOUNDS },
          );
          print(options.json ? renderJson(result, 2) : formatRecall(result));
        } catch (error) {
          if (error instanceof ApiError && error.status === 400) throw new CliError(error.message, EXIT.usage);
          throw error;
        } finally {
          deadline.release();
        }
      });
    });
}
