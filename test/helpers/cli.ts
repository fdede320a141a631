/**
 * Test helper for the CLI tests: the built binary (`node dist/src/cli/main.js`) run in a
 * child process, as a user runs it, against an embedded data directory (TAPEDECK_DATA_DIR,
 * PGlite + filesystem payloads) filled beforehand in-process through the ingest core.
 *
 * `useCli(name, fill)` registers the beforeAll that builds dist and fills a fresh temporary
 * directory, and the afterAll that removes it. The store is closed before any command runs:
 * one PGlite directory cannot be opened by two processes.
 *
 * Commands run with no TAPEDECK_* variable inherited from the environment running the tests,
 * so a developer's own settings cannot change what a test sees; `env` adds some back.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { openStore, type Store } from '../../src/open-store.js';
import { ingestRecords, loadCaptureRecords } from '../unit/runs/store-fixtures.js';
import { listCaptures } from './corpus.js';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = path.join(ROOT, 'dist', 'src', 'cli', 'main.js');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Cli {
  /** the temporary working directory (the data directory is `data` inside it) */
  readonly dir: string;
  readonly dataDir: string;
  /** `tapedeck ...args`, with the data directory set and no other TAPEDECK_* variable */
  run(...args: string[]): Promise<CliResult>;
  /** the same, with extra environment variables */
  runWith(env: Record<string, string>, ...args: string[]): Promise<CliResult>;
}

const BUILD_TIMEOUT_MILLIS = 240_000;

export function useCli(name: string, fill: (store: Store) => Promise<void>): Cli {
  let dir = '';
  const runWith = (env: Record<string, string>, ...args: string[]) =>
    runBinary(args, { cwd: dir, env: { TAPEDECK_DATA_DIR: path.join(dir, 'data'), ...env } });
  const cli: Cli = {
    get dir() {
      return dir;
    },
    get dataDir() {
      return path.join(dir, 'data');
    },
    run: (...args) => runWith({}, ...args),
    runWith,
  };

  beforeAll(async () => {
    await buildCli();
    dir = mkdtempSync(path.join(os.tmpdir(), `tapedeck-cli-${name}-`));
    const store = await openStore(loadConfig({ TAPEDECK_DATA_DIR: cli.dataDir }), silentLogger());
    try {
      await fill(store);
    } finally {
      await store.close();
    }
  }, BUILD_TIMEOUT_MILLIS);

  afterAll(() => {
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  return cli;
}

/** Ingests corpus captures named `<layout>/<scenario>`, failing on a name the corpus lacks. */
export async function ingestCaptures(store: Store, names: readonly string[]): Promise<void> {
  const refs = listCaptures().filter((r) => names.includes(`${r.layout}/${r.scenario}`));
  const missing = names.filter((n) => !refs.some((r) => `${r.layout}/${r.scenario}` === n));
  if (missing.length) throw new Error(`no corpus capture ${missing.join(', ')}`);
  for (const ref of refs) await ingestRecords(store, await loadCaptureRecords(ref));
}

/** Runs the binary with only `env` as TAPEDECK_* settings; stdin is closed, stdout and stderr are pipes. */
export function runBinary(
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string> },
): Promise<CliResult> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TAPEDECK_')));
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: options.cwd, env: { ...inherited, ...options.env }, timeout: 120_000 },
      (error, stdout, stderr) => {
        const code = error ? (error as { code?: unknown }).code : 0;
        resolve({ code: typeof code === 'number' ? code : -1, stdout, stderr });
      },
    );
    child.stdin?.end();
  });
}

// Test files run in parallel workers and any of them may need dist: one build at a time, and
// only when a source is newer than the build. \`npm test\` builds first (pretest), so there no
// test rebuilds dist while another copies or runs it.
const LOCK = path.join(os.tmpdir(), `tapedeck-cli-build-${Buffer.from(ROOT).toString('hex').slice(-32)}.lock`);

function newestSource(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestSource(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/** dist/ holds the CLI, built after the last change under src/. */
export function isCliFresh(): boolean {
  return existsSync(BIN) && statSync(BIN).mtimeMs >= newestSource(path.join(ROOT, 'src'));
}

/** Builds dist with `tsc -p tsconfig.build.json` when it is missing or older than src/. */
export async function buildCli(): Promise<void> {
  if (isCliFresh()) return;
  await acquireLock();
  try {
    if (isCliFresh()) return;
    let output = '';
    // Type errors elsewhere in the tree do not stop tsc from emitting; the binary is what counts.
    try {
      execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: ROOT, stdio: 'pipe' });
    } catch (error) {
      output = String((error as { stdout?: Buffer }).stdout ?? error);
    }
    if (!isCliFresh()) throw new Error(`the build did not produce a fresh ${BIN}\n${output}`);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

async function acquireLock(): Promise<void> {
  const giveUpAt = Date.now() + BUILD_TIMEOUT_MILLIS;
  for (;;) {
    try {
      mkdirSync(LOCK);
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    // A lock older than any build is left over from a killed run.
    try {
      if (Date.now() - statSync(LOCK).mtimeMs > BUILD_TIMEOUT_MILLIS) rmSync(LOCK, { recursive: true, force: true });
    } catch {
      /* removed meanwhile */
    }
    if (Date.now() > giveUpAt) throw new Error(`another test file has been building dist for too long (lock ${LOCK})`);
    await sleep(250);
  }
}
