/**
 * `replayCassette` (tapedeck/testing) is fail-closed: with TAPEDECK_DATABASE_URL unset, in an
 * empty working directory, a replay from the example's committed cassette serves the example
 * agent (the official OpenAI SDK in a tool loop) while every socket connect and name lookup in
 * the process is recorded. The only connections are the agent's own to the replay, and no
 * data directory is written.
 */
import dns from 'node:dns';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import OpenAI from 'openai';
import { expect, it } from 'vitest';
import { replayCassette } from '../../src/testing/index.js';
// @ts-expect-error the example agent is plain JavaScript
import { runWeatherAgent } from '../../examples/cassette-test/agent.mjs';

const CASSETTE = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../examples/cassette-test/weather.cassette.tar',
);

it("replays from a file with no database, no data directory and no connection but the client's own", async () => {
  const cwd = process.cwd();
  const scratch = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-no-outbound-'));
  const saved = process.env.TAPEDECK_DATABASE_URL;
  delete process.env.TAPEDECK_DATABASE_URL;
  const targets: string[] = [];
  const lookups: string[] = [];
  const originalConnect = net.Socket.prototype.connect;
  const originalLookup = dns.lookup;
  net.Socket.prototype.connect = function patched(this: net.Socket, ...args: unknown[]) {
    const first = (Array.isArray(args[0]) ? args[0][0] : args[0]) as { port?: number; host?: string; path?: string };
    targets.push(
      typeof first === 'object' && first !== null ? (first.path ?? `${first.host}:${first.port}`) : String(first),
    );
    return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof originalConnect;
  (dns as { lookup: unknown }).lookup = (...args: unknown[]) => {
    lookups.push(String(args[0]));
    return (originalLookup as (...a: unknown[]) => unknown)(...args);
  };
  process.chdir(scratch);
  let port = 0;
  try {
    const replay = await replayCassette(CASSETTE);
    port = Number(new URL(replay.baseUrls.openai).port);
    try {
      const client = new OpenAI({ baseURL: replay.baseUrls.openai, apiKey: 'replay', maxRetries: 0 });
      expect(await runWeatherAgent(client)).toBe("It's 18°C and partly cloudy in Paris right now.");
      await replay.assertReplayed();
    } finally {
      await replay.close();
    }
  } finally {
    process.chdir(cwd);
    net.Socket.prototype.connect = originalConnect;
    (dns as { lookup: unknown }).lookup = originalLookup;
    if (saved !== undefined) process.env.TAPEDECK_DATABASE_URL = saved;
  }
  expect(targets.length).toBeGreaterThan(0);
  expect(new Set(targets)).toEqual(new Set([`127.0.0.1:${port}`]));
  expect(lookups.filter((h) => h !== '127.0.0.1')).toEqual([]);
  expect(readdirSync(scratch)).toEqual([]);
  rmSync(scratch, { recursive: true });
});
