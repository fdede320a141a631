/**
 * `tapedeck reconstruct`, `tree` and `dataset` as a user runs them:
 * the built binary (`node dist/src/cli/main.js`, built in beforeAll by test/helpers/cli.ts) in a child process,
 * against an embedded data directory (TAPEDECK_DATA_DIR, PGlite + filesystem payloads)
 * filled beforehand through the ingest core. The store is closed before the CLI runs: one
 * PGlite directory cannot be opened by two processes. Checks exit codes, standard output and
 * standard error, human-readable and --json.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { ingestCaptures, useCli } from '../helpers/cli.js';
import { FINAL_ANSWER, RUNS } from '../fixtures/multi-agent/coordinator-capture.js';
import { loadCoordinatorFixture } from '../fixtures/multi-agent/coordinator-fixture.js';
import { validChatLine } from '../unit/runs/chat-validator.js';

const CAPTURES = [
  'openinference-openai/weather',
  'otel-genai-openai-nocontent/weather',
  'openinference-anthropic/error',
];
const WEATHER = 'sess-openinference-openai-weather';

const cli = useCli('runs', async (store) => {
  await ingestCaptures(store, CAPTURES);
  await ingestSpans(loadCoordinatorFixture(), { tenant: '' }, store.ingest);
});
const tapedeck = cli.run;

describe('tapedeck reconstruct', () => {
  it('prints the prompt, the tool calls and the answer', async () => {
    const r = await tapedeck('reconstruct', WEATHER);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^run ${WEATHER}: complete \\(the last model call answered\\), outcome success\\n`),
    );
    expect(r.stdout).toContain('[system] You are a concise weather assistant.');
    expect(r.stdout).toContain("[user] What's the weather in Paris right now?");
    expect(r.stdout).toMatch(/tool calls\n {2}1\. get_weather \{"city":"Paris"\} → \{"city":"Paris",.*\(call_\w+\)/);
    expect(r.stdout).toMatch(/output\n {2}\S.*Paris/);
    expect(r.stderr).toBe('');
  });

  it('prints JSON with --json', async () => {
    const r = await tapedeck('reconstruct', WEATHER, '--json');
    expect(r.code, r.stderr).toBe(0);
    const rec = JSON.parse(r.stdout);
    expect(rec).toMatchObject({
      run: WEATHER,
      status: 'complete',
      model_calls: 2,
      tool_calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}' }], // as the tool span recorded it
    });
    expect(rec.input.map((m: { role: string }) => m.role)).toEqual(['system', 'user']);
    expect(typeof rec.start_ns).toBe('number'); // an exact integer in the text; JSON.parse reads it as a number
  });

  it('says when a run failed, and exits 3 with a message for a run that does not exist', async () => {
    const failed = await tapedeck('reconstruct', 'sess-openinference-anthropic-error', '--json');
    expect(JSON.parse(failed.stdout)).toMatchObject({ status: 'error', output: null, outcome: 'failure' });
    const missing = await tapedeck('reconstruct', 'no-such-run');
    expect([missing.code, missing.stdout, missing.stderr]).toEqual([3, '', 'tapedeck: no run "no-such-run"\n']);
  });
});

describe('tapedeck tree', () => {
  it('draws the coordinator and its sub-agents in start order', async () => {
    const r = await tapedeck('tree', RUNS.coordinator);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.map((l) => /^[│├└─ ]*\S+/.exec(l)?.[0])).toEqual([
      RUNS.coordinator,
      `├── ${RUNS.paris}`,
      `│   └── ${RUNS.units}`,
      `└── ${RUNS.lyon}`,
      '4',
    ]);
    expect(lines[0]).toContain(FINAL_ANSWER.slice(0, 40));
  });

  it('prints JSON with --json and says truncated when a limit cuts the tree', async () => {
    const r = await tapedeck('tree', RUNS.coordinator, '--json', '--max-children', '1');
    expect(r.code, r.stderr).toBe(0);
    const tree = JSON.parse(r.stdout);
    expect([tree.run_count, tree.truncated, tree.truncated_by]).toEqual([3, true, ['children']]);
    expect(tree.root.children.map((c: { run: string }) => c.run)).toEqual([RUNS.paris]);
    const human = await tapedeck('tree', RUNS.coordinator, '--max-depth', '0');
    expect(human.stdout).toMatch(/more children not shown[\s\S]*1 run \(truncated: depth limit\)\n$/);
  });

  it('exits 2 on a bad limit and 3 on an unknown run', async () => {
    const bad = await tapedeck('tree', RUNS.coordinator, '--max-depth', 'deep');
    expect([bad.code, bad.stderr]).toEqual([
      2,
      'tapedeck: --max-depth must be a whole number from 0 to 64, got "deep"\n',
    ]);
    expect((await tapedeck('tree', 'no-such-run')).code).toBe(3);
  });
});

describe('tapedeck dataset', () => {
  it('writes one valid chat line per completed run and prints the counts', async () => {
    const r = await tapedeck('dataset', 'train.jsonl');
    expect(r.code, r.stderr).toBe(0);
    const lines = readFileSync(path.join(cli.dir, 'train.jsonl'), 'utf8').split('\n').filter(Boolean);
    for (const line of lines) expect(validChatLine(line), line).toBeNull();
    // Weather and the four runs of the coordination answered; the failed run is not a
    // success; content capture off leaves no prompt.
    expect(lines.length).toBe(5);
    expect(r.stdout).toBe('exported 5 of 7 runs to train.jsonl\nskipped 2: outcome 1, no_input 1\n');
    expect(r.stderr).toBe(''); // no progress bar when standard error is not a terminal
    expect(readdirSync(cli.dir).filter((f) => f.includes('.partial-'))).toEqual([]);
  });

  it('prints the counts as JSON with --json, and honours --since, --until and --outcome', async () => {
    const r = await tapedeck('dataset', 'failures.jsonl', '--outcome', 'failure', '--json');
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      considered: 7,
      exported: 0,
      skipped: { invalid_turns: 0, no_input: 0, no_output: 1, no_terminal: 0, outcome: 6, truncated: 0 },
    });
    const window = await tapedeck(
      'dataset',
      'window.jsonl',
      '--since',
      '2025-11-30T09:00:00Z',
      '--until',
      '2025-11-30T10:00:00Z',
      '--json',
    );
    expect(JSON.parse(window.stdout)).toMatchObject({ considered: 4, exported: 4 }); // the coordination only
  });

  it('streams to standard output with -, the counts going to standard error', async () => {
    const r = await tapedeck('dataset', '-', '--outcome', 'any');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.split('\n').filter(Boolean);
    expect(lines.length).toBe(5);
    for (const line of lines) expect(validChatLine(line)).toBeNull();
    expect(r.stderr).toBe('exported 5 of 7 runs to standard output\nskipped 2: no_input 1, no_output 1\n');
  });

  it('exits 2 on a time it cannot read, writing nothing', async () => {
    const r = await tapedeck('dataset', 'bad.jsonl', '--since', 'last tuesday');
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^tapedeck: --since must be an ISO 8601 time/);
    expect(existsSync(path.join(cli.dir, 'bad.jsonl'))).toBe(false);
    const outcome = await tapedeck('dataset', 'bad.jsonl', '--outcome', 'maybe');
    expect([outcome.code, outcome.stderr]).toEqual([
      2,
      'tapedeck: --outcome must be one of success, failure, any, got "maybe"\n',
    ]);
  });
});
