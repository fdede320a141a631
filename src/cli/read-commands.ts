/**
 * Commands that read the store: runs, tape, reindex. Human-readable by default, --json for
 * machines (sorted keys, exact nanosecond integers).
 */
import type { Command } from 'commander';
import { renderJson } from '../json/canonical.js';
import { InvalidCursorError, listRuns } from '../tapes/run-reader.js';
import { withCosts } from '../tapes/run-costs.js';
import { readTape } from '../tapes/tape-service.js';
import { reindex } from '../tapes/reindex.js';
import { CliError, EXIT } from './cli-error.js';
import { print, withStore } from './context.js';
import { addConfigOptions } from './flags.js';
import { createProgress } from './progress.js';
import { formatRuns, formatTape } from './format.js';

export function registerReadCommands(program: Command): void {
  addConfigOptions(program.command('runs').description('list runs, newest first'))
    .option('--limit <n>', 'how many runs', '20')
    .option('--cursor <cursor>', 'continue after a previous page')
    .option('--json', 'print JSON')
    .action(async (options: Record<string, string | boolean>) => {
      const limit = /^\d+$/.test(String(options.limit)) ? Number(options.limit) : NaN;
      if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
        throw new CliError('--limit must be a whole number from 1 to 1000', EXIT.usage);
      await withStore(options, async (store) => {
        let page;
        try {
          page = await listRuns(store.db, '', { limit, cursor: (options.cursor as string) || undefined });
        } catch (error) {
          // A cursor the store did not issue is a usage error, as GET /v1/runs answers 400.
          if (error instanceof InvalidCursorError) throw new CliError(`--cursor: ${error.message}`, EXIT.usage);
          throw error;
        }
        const priced = { ...page, runs: await withCosts(store.db, '', page.runs, store.pricing) };
        print(options.json ? renderJson(priced, 2) : formatRuns(priced));
      });
    });

  addConfigOptions(program.command('tape').description("print a run's tape").argument('<run>', 'run id'))
    .option('--resolve', 'inline offloaded payloads')
    .option('--json', 'print JSON')
    .action(async (run: string, options: Record<string, string | boolean>) => {
      await withStore(options, async (store, config) => {
        const tape = await readTape(store, '', run, {
          resolve: Boolean(options.resolve),
          maxResolveBytes: config.tapeMaxBytes,
        });
        if (!tape) throw new CliError(`no run ${JSON.stringify(run)}`, EXIT.notFound);
        print(options.json ? renderJson(tape, 2) : formatTape(tape));
      });
    });

  addConfigOptions(
    program.command('reindex').description('re-derive every step from the stored spans (after a normalizer change)'),
  )
    .option('--json', 'print the totals as JSON')
    .action(async (options: Record<string, string | boolean>) => {
      await withStore(options, async (store) => {
        const bar = createProgress();
        const totals = await reindex(store.db, store.derive, {
          onProgress: (p) => bar.update(p.tracesDone, p.tracesTotal, 'traces'),
        });
        bar.finish();
        print(
          options.json
            ? renderJson({
                traces_done: totals.tracesDone,
                traces_total: totals.tracesTotal,
                spans_done: totals.spansDone,
                steps: totals.steps,
              })
            : `reindexed ${totals.tracesDone} traces: ${totals.spansDone} spans, ${totals.steps} steps`,
        );
      });
    });
}
