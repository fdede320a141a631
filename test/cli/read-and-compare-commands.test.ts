/**
 * The read and compare commands: `tapedeck runs`, `tape`, `reindex`, `diff`
 * and `recall`, configuration errors, unknown commands and help, as a user runs them: the
 * built binary in a child process (test/helpers/cli.ts) against an embedded data directory
 * holding the openinference-openai weather and lyon captures and a failed run
 * (openinference-anthropic error). Checks exit codes (0 ok, 2 usage or configuration, 3 not
 * found), standard output and standard error, human-readable and --json. Standard output and
 * standard error are pipes here, so no progress bar may appear on either.
 *
 * What the diff, recall and tapes compute is tested where it is built (test/unit/diff,
 * test/unit/recall, test/integration); here only what the commands print is.
 */
import { describe, expect, it } from 'vitest';
import { renderJson } from '../../src/json/canonical.js';
import type { Tape } from '../../src/normalize/step.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { ingestCaptures, useCli, type CliResult } from '../helpers/cli.js';

const WEATHER = 'sess-openinference-openai-weather';
const LYON = 'sess-openinference-openai-lyon';
const FAILED = 'sess-openinference-anthropic-error';
/** by the end of their last span, newest first (the captures were recorded in this order) */
const NEWEST_FIRST = [FAILED, LYON, WEATHER];
const COMMANDS = [
  'serve',
  'runs',
  'tape',
  'reindex',
  'diff',
  'recall',
  'reconstruct',
  'tree',
  'dataset',
  'cassette',
  'replay',
  'mcp',
];

/** The weather tape as the store gives it, read in-process before the CLI runs. */
let weatherTape: Tape;

const cli = useCli('read', async (store) => {
  await ingestCaptures(store, [
    'openinference-openai/weather',
    'openinference-openai/lyon',
    'openinference-anthropic/error',
  ]);
  const tape = await readTape(store, '', WEATHER);
  if (!tape) throw new Error(`${WEATHER} was not stored`);
  weatherTape = tape;
});
const tapedeck = cli.run;

/** A failure says why on standard error only, and prints nothing on standard output. */
function expectFailure(r: CliResult, code: number, stderr: RegExp | string): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stdout).toBe('');
  if (typeof stderr === 'string') expect(r.stderr).toBe(stderr);
  else expect(r.stderr).toMatch(stderr);
}

const firstWords = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => line.split(/\s+/)[0]);

describe('tapedeck runs', () => {
  it('lists the runs newest first, one line each', async () => {
    const r = await tapedeck('runs');
    expect(r.code, r.stderr).toBe(0);
    expect(firstWords(r.stdout)).toEqual(NEWEST_FIRST);
    const ends = r.stdout
      .trimEnd()
      .split('\n')
      .map((line) => line.split(/\s+/)[1]);
    expect([...ends].sort().reverse()).toEqual(ends);
    expect(r.stdout).toMatch(
      new RegExp(`^${WEATHER}  \\S+Z  success  4 steps \\(2 llm, 1 tool\\)  tokens \\d+/\\d+  weather-agent$`, 'm'),
    );
    expect(r.stdout).toMatch(new RegExp(`^${FAILED}  \\S+Z  failure  `, 'm'));
    expect(r.stderr).toBe('');
  });

  it('prints the page as JSON with --json, and --limit 1 gives a cursor to the next page', async () => {
    const all = await tapedeck('runs', '--json');
    expect(all.code, all.stderr).toBe(0);
    const page = JSON.parse(all.stdout);
    expect(Object.keys(page)).toEqual(['next_cursor', 'runs']);
    expect(page.next_cursor).toBeNull();
    expect(page.runs.map((run: { run: string }) => run.run)).toEqual(NEWEST_FIRST);
    expect(page.runs[2]).toMatchObject({
      run: WEATHER,
      steps: 4,
      llm_steps: 2,
      tool_steps: 1,
      errors: 0,
      outcome: 'success',
    });
    // Nanosecond times are exact integers in the text, past what a double holds.
    expect(all.stdout).toMatch(/"last_end_ns": \d{19},/);

    const first = JSON.parse((await tapedeck('runs', '--json', '--limit', '1')).stdout);
    expect(first.runs.map((run: { run: string }) => run.run)).toEqual([FAILED]);
    expect(first.next_cursor).toEqual(expect.any(String));
    const next = await tapedeck('runs', '--limit', '1', '--cursor', first.next_cursor);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stdout).toMatch(new RegExp(`^${LYON}  .*\\nmore: --cursor \\S+\\n$`));
  });

  it('exits 2 naming the flag on a bad --limit or a cursor it did not issue', async () => {
    expectFailure(
      await tapedeck('runs', '--limit', '0'),
      2,
      /^tapedeck: --limit must be a whole number from 1 to 1000\n$/,
    );
    expectFailure(await tapedeck('runs', '--cursor', 'garbage'), 2, /^tapedeck: --cursor: cursor "garbage" is not one/);
  });
});

describe('tapedeck tape', () => {
  it('prints a header line and one line per step ending in its fingerprint', async () => {
    const r = await tapedeck('tape', WEATHER);
    expect(r.code, r.stderr).toBe(0);
    const [head, ...steps] = r.stdout.trimEnd().split('\n');
    expect(head).toBe(`run ${WEATHER}: 4 steps from ${weatherTape.spans_examined} spans`);
    expect(steps.length).toBe(weatherTape.steps.length);
    steps.forEach((line, i) => {
      const step = weatherTape.steps[i];
      expect(line).toMatch(
        new RegExp(
          `^ +${i}  ${step.kind} +\\S+  ${step.status}  \\d+ ms  ${step.fingerprint.replace(/[#.]/g, '\\$&')}$`,
        ),
      );
    });
    expect(steps.map((line) => line.split(/\s+/)[2])).toEqual(['agent', 'llm', 'tool', 'llm']);
  });

  it('prints with --json what GET /v1/tapes/{run} answers', async () => {
    const r = await tapedeck('tape', WEATHER, '--json');
    expect(r.code, r.stderr).toBe(0);
    // The route answers renderJson(tape); the CLI indents the same rendering.
    expect(r.stdout).toBe(`${renderJson(weatherTape, 2)}\n`);
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(renderJson(weatherTape)));
  });

  it('exits 3 on a run that does not exist, printing nothing', async () => {
    expectFailure(await tapedeck('tape', 'no-such-run'), 3, 'tapedeck: no run "no-such-run"\n');
    expectFailure(await tapedeck('tape', 'no-such-run', '--json'), 3, 'tapedeck: no run "no-such-run"\n');
  });
});

describe('tapedeck diff', () => {
  it('names the first divergence and prints the aligned steps', async () => {
    const r = await tapedeck('diff', WEATHER, LYON);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^a ${WEATHER}: 4 steps, 0 errors, `));
    expect(lines[1]).toMatch(new RegExp(`^b ${LYON}: 4 steps, 0 errors, `));
    expect(r.stdout).toMatch(
      /^first divergence \(input\): step 0 of a and step 0 of b \(agent:weather-agent\) received different input/m,
    );
    const rows = lines.slice(lines.indexOf('', 3) + 1);
    expect(rows).toEqual(
      weatherTape.steps.map(
        (s, i) => `${String(i).padStart(4)} ${String(i).padStart(4)}  changed/input     ${s.fingerprint}`,
      ),
    );
    expect(r.stderr).toBe('');
  });

  it('prints the diff as JSON with --json', async () => {
    const r = await tapedeck('diff', WEATHER, LYON, '--json');
    expect(r.code, r.stderr).toBe(0);
    const diff = JSON.parse(r.stdout);
    expect(Object.keys(diff)).toEqual(['a', 'aligned', 'b', 'delta', 'first_divergence', 'truncated']);
    expect(diff.first_divergence).toMatchObject({ a: 0, b: 0, kind: 'input' });
    expect([diff.a.run, diff.b.run, diff.truncated]).toEqual([WEATHER, LYON, false]);
    expect(diff.aligned.map((s: { op: string; why: string }) => `${s.op}/${s.why}`)).toEqual(
      Array(4).fill('changed/input'),
    );
    expect(diff.delta).toMatchObject({ steps: 0, errors: 0 });
  });

  it('exits 3 on a run that does not exist, on either side', async () => {
    expectFailure(await tapedeck('diff', WEATHER, 'no-such-run'), 3, 'tapedeck: no run "no-such-run"\n');
    expectFailure(await tapedeck('diff', 'no-such-run', LYON, '--json'), 3, 'tapedeck: no run "no-such-run"\n');
  });

  it('exits 2 with the message when it cannot finish within --query-deadline-ms', async () => {
    expectFailure(
      await tapedeck('diff', WEATHER, LYON, '--query-deadline-ms', '1'),
      2,
      /^tapedeck: the request could not be answered within its 1 ms budget \(--query-deadline-ms\)[^\n]*\n$/,
    );
  });
});

describe('tapedeck recall', () => {
  it('finds every run holding the words, successes first, each with its skeleton', async () => {
    const r = await tapedeck('recall', 'weather');
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.filter((l) => !l.startsWith(' ')).map((l) => l.split(/\s+/).slice(0, 2))).toEqual([
      [LYON, 'success'],
      [WEATHER, 'success'],
      [FAILED, 'failure'],
    ]);
    expect(lines[1]).toBe('    agent:weather-agent → llm:gpt-4o-mini → tool:get_weather → llm:gpt-4o-mini');
    expect(r.stderr).toBe('');
  });

  it('prints the result as JSON with --json, and --outcome narrows it', async () => {
    const r = await tapedeck('recall', 'Weather', 'PARIS', '--outcome', 'success', '--json');
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout);
    expect(Object.keys(result)).toEqual(['runs', 'truncated', 'unindexed_steps']);
    expect(result.truncated).toBe(false);
    expect(result.runs.map((run: { run: string }) => run.run)).toEqual([WEATHER]);
    expect(result.runs[0]).toMatchObject({
      outcome: 'success',
      steps: 4,
      skeleton: expect.arrayContaining(['tool:get_weather']),
      skeleton_truncated: false,
    });
    expect(result.runs[0].score).toBeGreaterThan(0);
    expect(r.stdout).toMatch(/"last_end_ns": \d{19},/);
  });

  it('says so, and exits 0, when no run holds every word', async () => {
    const r = await tapedeck('recall', 'weather', 'zyzzyvaquux');
    expect([r.code, r.stdout, r.stderr]).toEqual([0, 'no run holds every word\n', '']);
  });

  it('exits 2 on an outcome it does not know or a query with no words', async () => {
    expectFailure(
      await tapedeck('recall', 'weather', '--outcome', 'bogus'),
      2,
      'tapedeck: --outcome must be success, failure or any\n',
    );
    expectFailure(await tapedeck('recall', '!!!'), 2, /^tapedeck: q "!!!" holds no words/);
  });
});

describe('tapedeck reindex', () => {
  it('prints the totals, the same on a second run, and leaves the tapes as they were', async () => {
    const first = await tapedeck('reindex');
    // No progress bar: standard error is not a terminal, and standard output holds only the totals.
    expect([first.code, first.stdout, first.stderr]).toEqual([0, 'reindexed 3 traces: 14 spans, 14 steps\n', '']);
    const again = await tapedeck('reindex', '--json');
    expect([again.code, again.stderr]).toEqual([0, '']);
    expect(JSON.parse(again.stdout)).toEqual({ traces_done: 3, traces_total: 3, spans_done: 14, steps: 14 });
    expect((await tapedeck('tape', WEATHER, '--json')).stdout).toBe(`${renderJson(weatherTape, 2)}\n`);
  });
});

describe('configuration and usage errors', () => {
  it('exits 2 naming the setting when the configuration is invalid, before doing anything', async () => {
    const port = await cli.runWith({ TAPEDECK_HTTP_PORT: 'abc' }, 'serve');
    expectFailure(port, 2, 'tapedeck: invalid configuration: TAPEDECK_HTTP_PORT: expected a whole number, got "abc"\n');
    expectFailure(
      await cli.runWith({ TAPEDECK_DERIVE: 'maybe' }, 'serve'),
      2,
      'tapedeck: invalid configuration: TAPEDECK_DERIVE: expected on or off, got "maybe"\n',
    );
    expectFailure(
      await tapedeck('serve', '--derive', 'later'),
      2,
      'tapedeck: invalid configuration: --derive: expected on or off, got "later"\n',
    );
    for (const command of ['runs', 'serve']) {
      expectFailure(
        await tapedeck(command, '--database-url', 'mysql://x'),
        2,
        /^tapedeck: invalid configuration: --database-url: expected a postgres:\/\/ or postgresql:\/\/ URL/,
      );
    }
  });

  it('exits 2 on an unknown command, an unknown option, a missing argument or no command at all', async () => {
    const unknown = await tapedeck('bogus');
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toMatch(/^error: unknown command 'bogus'\n/);
    expect((await tapedeck('runs', '--bogus')).stderr).toMatch(/^error: unknown option '--bogus'/);
    expect((await tapedeck('runs', '--bogus')).code).toBe(2);
    expect((await tapedeck('tape')).code).toBe(2);
    const bare = await tapedeck();
    expect([bare.code, bare.stdout]).toEqual([2, '']);
    expect(bare.stderr).toMatch(/^Usage: tapedeck /);
  });

  it('exits 0 on --help, listing every command', async () => {
    const r = await tapedeck('--help');
    expect([r.code, r.stderr]).toEqual([0, '']);
    const listed = r.stdout
      .split('\n')
      .map((line) => /^ {2}([a-z]+) /.exec(line)?.[1])
      .filter(Boolean);
    expect(listed).toEqual([...COMMANDS, 'help']);
    const runsHelp = await tapedeck('help', 'runs');
    expect(runsHelp.code).toBe(0);
    expect(runsHelp.stdout).toMatch(/^Usage: tapedeck runs \[options\]/);
  });
});
