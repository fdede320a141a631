/**
 * NOTE: examples/replay/run.sh, the end-to-end demo, run as CI runs it: the built CLI, a
 * fresh embedded store, the scripted stand-in model and a real instrumented agent. It must
 * pass; and with a build whose replay is broken on purpose (strict matching never matches) it
 * must exit non-zero naming the claim that failed.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, expect, it } from 'vitest';
import { packageRoot } from '../../src/package-root.js';
import { buildCli } from '../helpers/cli.js';

const root = packageRoot();
const script = path.join(root, 'examples/replay/run.sh');

async function runDemo(env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)('bash', [script], {
      env: { ...process.env, ...env },
      timeout: 240_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof e.code === 'number' ? e.code : -1, stdout: e.stdout ?? '', stderr: e.stderr ?? '' };
  }
}

// run alone, the demo needs the CLI built; under `npm test` it already is (pretest)
beforeAll(buildCli, 180_000);

it('proves every claim of the demo and exits 0', async () => {
  const { code, stdout, stderr } = await runDemo();
  expect(code, `${stdout}\n${stderr}`).toBe(0);
  const claims = stdout.split('\n').filter((line) => line.startsWith('ok   ')).length;
  expect(claims).toBe(11);
  expect(stdout).toMatch(new RegExp(`^proved ${claims} claims`, 'm'));
  expect(stdout).not.toContain('FAIL');
}, 300_000);

it('exits non-zero naming the claim when replay is broken on purpose', async () => {
  // a copy of the build beside the package's files, with strict matching broken
  const broken = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-broken-'));
  try {
    cpSync(path.join(root, 'dist'), path.join(broken, 'dist'), { recursive: true });
    for (const name of ['package.json', 'node_modules', 'proto', 'src'])
      symlinkSync(path.join(root, name), path.join(broken, name));
    const serveCall = path.join(broken, 'dist/src/replay/serve-call.js');
    const code = readFileSync(serveCall, 'utf8');
    const matching = 'const matched = entry.digest !== null && entry.digest === gotDigest;';
    expect(code, 'the line this test breaks is still there').toContain(matching);
    writeFileSync(serveCall, code.replace(matching, 'const matched = false;'));
    const result = await runDemo({ TAPEDECK_CLI: path.join(broken, 'dist/src/cli/main.js') });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('FAIL: the replay answers the agent exactly as recorded, through the official SDK');
    expect(result.stdout).not.toMatch(/^proved/m);
  } finally {
    rmSync(broken, { recursive: true, force: true });
  }
}, 300_000);
