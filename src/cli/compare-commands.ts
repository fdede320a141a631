/**
 * `tapedeck diff A B`: the same comparison as GET /v1/diff, within --query-deadline-ms.
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
import { formatDiff } from './format-diff.js';

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
          const [tapeA, tapeB] = await Promise.all([
            deadline.race(loadDiffTape(store, '', a, { maxSpans: DEFAULT_MAX_DIFF_SPANS }), 'reading run a'),
            deadline.race(loadDiffTape(store, '', b, { maxSpans: DEFAULT_MAX_DIFF_SPANS }), 'reading run b'),
          ]);
          if (!tapeA) throw new CliError(`no run ${JSON.stringify(a)}`, EXIT.notFound);
          if (!tapeB) throw new CliError(`no run ${JSON.stringify(b)}`, EXIT.notFound);
          const diff = diffRuns(tapeA, tapeB, { deadline, pricing: store.pricing, nowNs: BigInt(Date.now()) * 1_000_000n });
          print(options.json ? renderJson(diff, 2) : formatDiff(diff));
        } finally {
          deadline.release();
        }
      });
    });
}
