/**
 * `tapedeck cassette export|verify|rename|import` and `tapedeck replay --cassette` as a user
 * runs them: the built binary in a child process, against an embedded data directory filled
 * through the ingest core (test/helpers/cli.ts). The replay from a file runs with no
 * TAPEDECK_* variable at all (no database URL, no data directory) in an empty working
 * directory, with its network layer patched (test/fixtures/cassettes/no-outbound.mjs) to
 * record and refuse every outbound connection and record every name lookup; the official
 * OpenAI SDK is served the recorded answers, no connection is attempted, the only lookup is of
 * the address it listens on, and no data directory appears.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { BIN, ingestCaptures, useCli } from '../helpers/cli.js';
import { FIXTURE_ROOT, readGroundTruth } from '../helpers/corpus.js';
import { RUNS } from '../fixtures/multi-agent/coordinator-capture.js';
import { loadCoordinatorFixture } from '../fixtures/multi-agent/coordinator-fixture.js';
import { openAiClient } from '../fixtures/replay/sdk-runs.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const WEATHER = 'sess-openllmetry-openai-weather';
const NO_OUTBOUND = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  '..',
  'fixtures',
  'cassettes',
  'no-outbound.mjs',
);

const cli = useCli('cassette', async (store) => {
  await ingestCaptures(store, ['openllmetry-openai/weather']);
  await ingestSpans(loadCoordinatorFixture(), { tenant: '' }, store.ingest);
});
const tapedeck = cli.run;
const file = (name: string) => path.join(cli.dir, name);
// Commands that open an embedded store start PGlite, slow on a loaded machine.
const STORE_COMMANDS_MS = 300_000;
let exported: Any;

beforeAll(async () => {
  const out = await tapedeck('cassette', 'export', WEATHER, '-o', file('clean.tar'), '--name', 'weather');
  expect(out.code, out.stderr).toBe(0);
  exported = JSON.parse(out.stdout);
}, STORE_COMMANDS_MS);

describe('tapedeck cassette', () => {
  it(
    'exports, verifies, renames and imports a run idempotently into another store',
    async () => {
      copyFileSync(file('clean.tar'), file('weather.tar'));
      expect(exported).toMatchObject({ name: 'weather', root_run: WEATHER, runs: [{ run: WEATHER, llm_steps: 2 }] });

      const verified = await tapedeck('cassette', 'verify', file('weather.tar'));
      expect([verified.code, JSON.parse(verified.stdout).valid], verified.stderr).toEqual([0, true]);

      const renamed = await tapedeck('cassette', 'rename', file('weather.tar'), 'weather, renamed');
      expect(renamed.code, renamed.stderr).toBe(0);
      const after = JSON.parse(renamed.stdout);
      expect([after.id, after.name]).toEqual([exported.id, 'weather, renamed']);
      expect(after.manifest_sha256).not.toBe(exported.manifest_sha256);

      const other = { TAPEDECK_DATA_DIR: file('other') };
      const first = await cli.runWith(other, 'cassette', 'import', file('weather.tar'));
      expect(first.code, first.stderr).toBe(0);
      expect(JSON.parse(first.stdout)).toMatchObject({
        runs_written: 1,
        catalog: { id: exported.id, name: 'weather, renamed' },
      });
      const again = await cli.runWith(other, 'cassette', 'import', file('weather.tar'));
      expect(JSON.parse(again.stdout)).toMatchObject({ runs_written: 0, steps_written: 0 });
      const tapeHere = await tapedeck('tape', WEATHER, '--json');
      const tapeThere = await cli.runWith(other, 'tape', WEATHER, '--json');
      expect(tapeThere.stdout).toBe(tapeHere.stdout);
    },
    STORE_COMMANDS_MS,
  );

  it(
    'exports a run with every run it started (--tree), and with raw spans without credentials',
    async () => {
      const out = await tapedeck(
        'cassette',
        'export',
        RUNS.coordinator,
        '--tree',
        '--with-spans',
        '-o',
        file('tree.tar'),
      );
      expect(out.code, out.stderr).toBe(0);
      const runs = JSON.parse(out.stdout).runs.map((r: Any) => r.run);
      expect(runs[0]).toBe(RUNS.coordinator);
      expect(new Set(runs)).toEqual(new Set(Object.values(RUNS)));
      expect((await tapedeck('cassette', 'verify', file('tree.tar'))).code).toBe(0);
    },
    STORE_COMMANDS_MS,
  );

  it(
    'refuses a tampered cassette naming the file and the reason, and imports nothing',
    async () => {
      const bytes = readFileSync(file('clean.tar'));
      // the tar's second entry (runs/0/steps.jsonl) starts after the manifest's header and data
      const at = bytes.indexOf(Buffer.from('{"cost_usd"'));
      bytes[at + 3] ^= 0x01;
      writeFileSync(file('tampered.tar'), bytes);
      const verified = await tapedeck('cassette', 'verify', file('tampered.tar'));
      expect(verified.code).toBe(1);
      expect(verified.stderr).toMatch(/cassette refused: runs\/0\/steps\.jsonl: its SHA-256 \w+ does not match/);
      const imported = await cli.runWith(
        { TAPEDECK_DATA_DIR: file('untouched') },
        'cassette',
        'import',
        file('tampered.tar'),
      );
      expect(imported.code).toBe(1);
      expect(existsSync(file('untouched'))).toBe(false);
      const replay = await cli.runWith({}, 'replay', '--cassette', file('tampered.tar'));
      expect([replay.code, replay.stdout]).toEqual([1, '']);
    },
    STORE_COMMANDS_MS,
  );
});

describe('tapedeck replay --cassette', () => {
  it(
    'takes --host, --port, --mode, --timing and --speed, and refuses a speed out of bounds as a usage error',
    async () => {
      const child = spawn(
        process.execPath,
        [
          BIN,
          'replay',
          '--cassette',
          file('clean.tar'),
          '--host',
          '127.0.0.1',
          '--port',
          '0',
          '--mode',
          'loose',
          '--timing',
          'recorded',
          '--speed',
          '2.5',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      try {
        const line: string = await new Promise((resolve, reject) => {
          createInterface({ input: child.stdout }).once('line', resolve);
          child.once('exit', (code) => reject(new Error(`replay exited ${code}`)));
        });
        const replay = JSON.parse(line);
        expect([replay.mode, replay.playback]).toEqual(['loose', { paused: false, speed: 2.5, timing: 'recorded' }]);
        expect(new URL(replay.base_urls.openai).hostname).toBe('127.0.0.1');
      } finally {
        // code and signal both: a death by signal says which
        const exited = new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
        child.kill('SIGTERM');
        expect(await exited).toEqual({ code: 0, signal: null });
      }
      for (const speed of ['1001', '0', 'fast']) {
        const out = await cli.runWith({}, 'replay', '--cassette', file('clean.tar'), '--speed', speed);
        expect([out.code, out.stdout, out.stderr.trim()]).toEqual([
          2,
          '',
          'tapedeck: --speed must be a number above 0 and at most 1000',
        ]);
      }
    },
    STORE_COMMANDS_MS,
  );

  it(
    'serves the recorded answers with no database, no data directory and no outbound connection',
    async () => {
      const cwd = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-replay-cwd-'));
      const log = path.join(cli.dir, 'outbound.log');
      const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('TAPEDECK_')));
      const child = spawn(process.execPath, ['--import', NO_OUTBOUND, BIN, 'replay', '--cassette', file('clean.tar')], {
        cwd,
        env: { ...env, NO_OUTBOUND_LOG: log },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      try {
        const line: string = await new Promise((resolve, reject) => {
          createInterface({ input: child.stdout }).once('line', resolve);
          child.once('exit', (code) => reject(new Error(`replay exited ${code}`)));
        });
        const replay = JSON.parse(line);
        expect(replay).toMatchObject({ run: WEATHER, mode: 'strict', llm_steps: 2 });
        const truth = readGroundTruth(path.join(FIXTURE_ROOT, 'openllmetry-openai', 'weather'));
        const client = openAiClient(replay.base_urls.openai);
        for (const step of truth.steps.filter((s) => s.type === 'model_call')) {
          const { stream: _s, stream_options: _o, ...params } = step.request as Any;
          const answer: Any = await client.chat.completions.create(params);
          const recorded: Any = (step.response as Any).choices[0].message;
          expect(answer.choices[0].message.content).toBe(recorded.content ?? null);
        }
        const status: Any = await (
          await fetch(`${new URL(replay.base_urls.openai).origin}/v1/replays/${replay.id}`)
        ).json();
        expect([status.served, status.remaining, status.diverged]).toEqual([2, 0, null]);
      } finally {
        if (child.exitCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        }
      }
      // no connection at all; the one lookup is of the address it listens on
      expect(
        readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l && l !== 'lookup 127.0.0.1'),
      ).toEqual(['armed']);
      expect(readdirSync(cwd)).toEqual([]);
      rmSync(cwd, { recursive: true });
    },
    STORE_COMMANDS_MS,
  );
});
