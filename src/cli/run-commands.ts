/**
 * Commands that rebuild runs from the store, with no model call: reconstruct, tree, dataset.
 * Human-readable by default, --json for machines (sorted keys, exact nanosecond integers).
 * Exit codes: 0 ok, 1 failure, 2 usage (a bad flag or time), 3 no such run.
 */
import { createWriteStream, renameSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import type { Command } from 'commander';
import { renderJson } from '../json/canonical.js';
import { chatDatasetLines, emptySummary, type DatasetSummary } from '../runs/dataset.js';
import { datasetFilterOf, DatasetFilterError } from '../runs/dataset-filter.js';
import { countRuns } from '../runs/run-pages.js';
import { reconstructStoredRun } from '../runs/run-service.js';
import { buildRunTree, DEFAULT_TREE_LIMITS, TREE_LIMIT_CEILINGS } from '../runs/tree.js';
import type { Store } from '../open-store.js';
import { CliError, EXIT } from './cli-error.js';
import { print, withStore } from './context.js';
import { addConfigOptions } from './flags.js';
import { formatDatasetSummary, formatReconstruction, formatRunTree } from './format.js';
import { createProgress } from './progress.js';

type Options = Record<string, string | boolean | undefined>;

export function registerRunCommands(program: Command): void {
  addConfigOptions(
    program
      .command('reconstruct')
      .description("rebuild a run's prompt, answer and tool calls from its tape")
      .argument('<run>', 'run id'),
  )
    .option('--json', 'print JSON')
    .action(async (run: string, options: Options) => {
      await withStore(options, async (store, config) => {
        const rec = await reconstructStoredRun(store, '', run, { maxResolveBytes: config.tapeMaxBytes });
        if (!rec) throw new CliError(`no run ${JSON.stringify(run)}`, EXIT.notFound);
        print(options.json ? renderJson(rec, 2) : formatReconstruction(rec));
      });
    });

  addConfigOptions(
    program
      .command('tree')
      .description('rebuild a run and every run it started, as a tree')
      .argument('<run>', 'run id of the root'),
  )
    .option(
      '--max-depth <n>',
      `levels below the root (default ${DEFAULT_TREE_LIMITS.maxDepth}, at most ${TREE_LIMIT_CEILINGS.maxDepth})`,
    )
    .option(
      '--max-children <n>',
      `children shown per run (default ${DEFAULT_TREE_LIMITS.maxChildren}, at most ${TREE_LIMIT_CEILINGS.maxChildren})`,
    )
    .option(
      '--max-runs <n>',
      `runs in the tree (default ${DEFAULT_TREE_LIMITS.maxRuns}, at most ${TREE_LIMIT_CEILINGS.maxRuns})`,
    )
    .option('--json', 'print JSON')
    .action(async (run: string, options: Options) => {
      const limits = {
        maxDepth: wholeNumber(
          options.maxDepth,
          '--max-depth',
          DEFAULT_TREE_LIMITS.maxDepth,
          0,
          TREE_LIMIT_CEILINGS.maxDepth,
        ),
        maxChildren: wholeNumber(
          options.maxChildren,
          '--max-children',
          DEFAULT_TREE_LIMITS.maxChildren,
          1,
          TREE_LIMIT_CEILINGS.maxChildren,
        ),
        maxRuns: wholeNumber(
          options.maxRuns,
          '--max-runs',
          DEFAULT_TREE_LIMITS.maxRuns,
          1,
          TREE_LIMIT_CEILINGS.maxRuns,
        ),
      };
      await withStore(options, async (store, config) => {
        const tree = await buildRunTree(store, '', run, { limits, maxResolveBytes: config.tapeMaxBytes });
        if (!tree) throw new CliError(`no run ${JSON.stringify(run)}`, EXIT.notFound);
        print(options.json ? renderJson(tree, 2) : formatRunTree(tree));
      });
    });

  addConfigOptions(
    program
      .command('dataset')
      .description('export completed runs as chat-format JSONL for fine-tuning (one {"messages": [...]} per run)')
      .argument('<out>', 'file to write (- for standard output)'),
  )
    .option('--since <time>', 'runs that started at or after this time (ISO 8601 or Unix ns)')
    .option('--until <time>', 'runs that started before this time (ISO 8601 or Unix ns)')
    .option('--outcome <outcome>', 'success, failure or any', 'success')
    .option('--merge-user-turns', 'join consecutive user turns into one (for trainers that need strict alternation)')
    .option('--json', 'print the counts as JSON')
    .action(async (out: string, options: Options) => {
      let filter;
      try {
        filter = datasetFilterOf({
          since: options.since as string,
          until: options.until as string,
          outcome: options.outcome as string,
          mergeUserTurns: options.mergeUserTurns === true,
        });
      } catch (error) {
        if (error instanceof DatasetFilterError) throw new CliError(`--${error.message}`, EXIT.usage);
        throw error;
      }
      await withStore(options, async (store, config) => {
        const summary = await exportDataset(store, out, filter, config.tapeMaxBytes);
        // With the lines on standard output, the counts go to standard error.
        const report = options.json
          ? renderJson(summary)
          : formatDatasetSummary(summary, out === '-' ? 'standard output' : out);
        if (out === '-') process.stderr.write(`${report}\n`);
        else print(report);
      });
    });
}

/**
 * Streams the lines into `out` (written to a temporary file beside it and renamed at the
 * end, so an interrupted export never leaves a half-written file under the name asked for).
 */
async function exportDataset(
  store: Store,
  out: string,
  filter: ReturnType<typeof datasetFilterOf>,
  maxResolveBytes: number,
): Promise<DatasetSummary> {
  const toStdout = out === '-';
  const target = toStdout ? out : path.resolve(out);
  const temporary = `${target}.partial-${process.pid}`;
  const stream = toStdout ? process.stdout : createWriteStream(temporary, { flags: 'wx' });
  if (!toStdout)
    await Promise.race([
      once(stream, 'open'),
      once(stream, 'error').then(([e]) => {
        throw new CliError(`cannot write ${out}: ${(e as Error).message}`);
      }),
    ]);
  const interrupted = new AbortController();
  const onSignal = () =>
    interrupted.abort(new CliError(toStdout ? 'interrupted' : `interrupted; ${out} was not written`));
  process.once('SIGINT', onSignal);
  const bar = createProgress();
  const total = process.stderr.isTTY ? await countRuns(store.db, '', filter) : 0;
  const summary = emptySummary();
  try {
    for await (const line of chatDatasetLines(store, '', filter, summary, {
      maxResolveBytes,
      signal: interrupted.signal,
      onRun: (s) => bar.update(s.considered, total, `runs, ${s.exported} exported`),
    })) {
      if (!stream.write(line)) await once(stream, 'drain');
    }
    bar.finish();
    if (!toStdout) {
      stream.end();
      await once(stream, 'finish');
      renameSync(temporary, target);
    }
    return summary;
  } catch (error) {
    bar.finish();
    if (!toStdout) {
      stream.destroy();
      rmSync(temporary, { force: true });
    }
    throw interrupted.signal.aborted ? interrupted.signal.reason : error;
  } finally {
    process.off('SIGINT', onSignal);
  }
}

function wholeNumber(
  value: string | boolean | undefined,
  flag: string,
  fallback: number,
  min: number,
  max: number,
): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (typeof value !== 'string' || !/^\d+$/.test(value) || n < min || n > max) {
    throw new CliError(
      `${flag} must be a whole number from ${min} to ${max}, got ${JSON.stringify(value)}`,
      EXIT.usage,
    );
  }
  return n;
}
