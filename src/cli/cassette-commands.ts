/**
 * `tapedeck cassette export|import|rename|verify` (docs/cassettes.md). Export and import read
 * the store from the same settings as `serve`; verify and rename read only the file. A
 * cassette that fails its audit exits 1 with the file and the reason. Files are written to a
 * temporary name and renamed, so a failed write never leaves half a cassette.
 */
import { renameSync, rmSync, writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { exportCassette } from '../cassettes/export.js';
import { CassetteInvalid, type CassetteLimits, defaultCassetteLimits } from '../cassettes/format.js';
import { importCassette } from '../cassettes/import.js';
import { loadCassette } from '../cassettes/load.js';
import { renameCassette } from '../cassettes/rename.js';
import { ApiError } from '../errors.js';
import { renderJson } from '../json/canonical.js';
import { CliError, EXIT } from './cli-error.js';
import { print, withStore } from './context.js';
import { addConfigOptions } from './flags.js';

type Options = Record<string, string | boolean | undefined>;

const LIMIT_FLAGS = [
  ['--max-frame-bytes <n>', 'maxFrameBytes', 'TAPEDECK_CASSETTE_MAX_FRAME_BYTES'],
  ['--max-frames-bytes <n>', 'maxFramesBytes', 'TAPEDECK_CASSETTE_MAX_FRAMES_BYTES'],
  ['--max-cassette-bytes <n>', 'maxCassetteBytes', 'TAPEDECK_CASSETTE_MAX_BYTES'],
] as const;

/** The size policy's flags (then environment, then defaults), on every cassette command. */
export function addLimitOptions(command: Command): Command {
  for (const [flag, key, env] of LIMIT_FLAGS)
    command.option(flag, `size policy (env ${env}, default ${defaultCassetteLimits[key]})`);
  return command;
}

export function limitsOf(options: Options, env: NodeJS.ProcessEnv = process.env): CassetteLimits {
  const out: CassetteLimits = { ...defaultCassetteLimits };
  for (const [flag, key, name] of LIMIT_FLAGS) {
    const raw = (options[key] as string | undefined) ?? env[name];
    if (raw === undefined || raw === '') continue;
    if (!/^\d+$/.test(raw) || Number(raw) < 1)
      throw new CliError(`${flag.split(' ')[0]} must be a whole number of bytes`, EXIT.usage);
    out[key] = Number(raw);
  }
  return out;
}

/** A refused cassette or export ends the command with its reason. */
export async function refusalsAsCliErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof CassetteInvalid) throw new CliError(`cassette refused: ${error.message}`, EXIT.failure);
    if (error instanceof ApiError && error.type === 'not_found') throw new CliError(error.message, EXIT.notFound);
    if (error instanceof ApiError && error.type === 'cassette_refused') throw new CliError(error.message, EXIT.failure);
    throw error;
  }
}

function writeAtomically(file: string, bytes: Buffer): void {
  const tmp = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, file);
  } catch (error) {
    rmSync(tmp, { force: true });
    throw error;
  }
}

export function registerCassetteCommands(program: Command): void {
  const cassette = program.command('cassette').description('portable recorded runs: export, import, rename, verify');

  addLimitOptions(
    addConfigOptions(
      cassette
        .command('export')
        .description('write a run (or, with --tree, the run and every run it started) to one cassette file')
        .argument('<run>', 'run id'),
    ),
  )
    .requiredOption('-o, --output <file>', 'the cassette file to write')
    .option('--tree', 'the run and every run it started')
    .option('--with-spans', 'also the raw spans, as OTLP JSON (credential-like attributes left out)')
    .option('--name <name>', 'the cassette name (default: its creation time)')
    .action(async (run: string, options: Options) => {
      const limits = limitsOf(options);
      await withStore(options, (store) =>
        refusalsAsCliErrors(async () => {
          const out = await exportCassette(store, '', run, {
            tree: Boolean(options.tree),
            withSpans: Boolean(options.withSpans),
            name: options.name as string | undefined,
            limits,
          });
          writeAtomically(options.output as string, out.bytes);
          print(renderJson(summaryOf(out.manifest, out.bytes.length), 2));
        }),
      );
    });

  addLimitOptions(
    addConfigOptions(
      cassette.command('import').description('import a cassette into the store (idempotent)').argument('<file>'),
    ),
  ).action(async (file: string, options: Options) => {
    const limits = limitsOf(options);
    // The file is audited before the store is opened: a refused cassette changes nothing.
    const loaded = await refusalsAsCliErrors(() => loadCassette(file, limits));
    await withStore(options, async (store) => {
      const result = await importCassette(store, loaded);
      print(renderJson(result, 2));
    });
  });

  addLimitOptions(
    cassette
      .command('rename')
      .description("rename a cassette: rewrites its manifest and the manifest's hash")
      .argument('<file>')
      .argument('<name>'),
  ).action(async (file: string, name: string, options: Options) => {
    const out = await refusalsAsCliErrors(() => renameCassette(file, name, limitsOf(options)));
    writeAtomically(file, out.bytes);
    print(renderJson(summaryOf(out.manifest, out.bytes.length), 2));
  });

  addLimitOptions(
    cassette
      .command('verify')
      .description('audit a cassette: exit 0 when valid, 1 naming the first problem')
      .argument('<file>'),
  ).action(async (file: string, options: Options) => {
    const loaded = await refusalsAsCliErrors(() => loadCassette(file, limitsOf(options)));
    print(renderJson({ valid: true, ...summaryOf(loaded.manifest, loaded.sizeBytes) }, 2));
  });
}

function summaryOf(m: import('../cassettes/format.js').Manifest, sizeBytes: number): Record<string, unknown> {
  return {
    id: m.id,
    name: m.name,
    manifest_sha256: m.manifest_sha256,
    root_run: m.root_run,
    runs: m.runs.map((r) => ({ run: r.run, steps: r.steps, llm_steps: r.llm_steps })),
    files: m.files.length + 1,
    size_bytes: sizeBytes,
  };
}
