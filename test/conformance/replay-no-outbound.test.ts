/**
 * The replay path never calls a model provider (docs/architecture.md, invariant 8). While whole
 * runs replay through both official SDKs, plain and streamed, every socket connect and DNS
 * lookup in the process is recorded; the only connections allowed are the test's own client to
 * the replay server.
 */
import dns from 'node:dns';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadFixture, type ReplayHarness, startReplayServer } from '../fixtures/replay/harness.js';
import { anthropicClient, callAnthropic, callOpenAi, openAiClient } from '../fixtures/replay/sdk-runs.js';

const openaiRun = loadFixture('otel-genai-openai--multi-tool');
const anthropicRun = loadFixture('openllmetry-anthropic--multi-tool');
let h: ReplayHarness;

beforeAll(async () => {
  h = await startReplayServer({ tapes: [openaiRun.tape, anthropicRun.tape] });
});
afterAll(async () => h.close());

it("opens no socket and resolves no name other than the test client's own connections to the replay server", async () => {
  const targets: string[] = [];
  const lookups: string[] = [];
  const originalConnect = net.Socket.prototype.connect;
  const originalLookup = dns.lookup;
  const originalPromiseLookup = dns.promises.lookup;
  net.Socket.prototype.connect = function patched(this: net.Socket, ...args: unknown[]) {
    // net.connect passes its normalized [options, callback] pair as one argument
    const first = (Array.isArray(args[0]) ? args[0][0] : args[0]) as
      | { port?: number; host?: string; path?: string }
      | number
      | string;
    if (typeof first === 'object' && first !== null)
      targets.push(first.path ?? `${first.host ?? 'localhost'}:${first.port}`);
    else targets.push(typeof first === 'number' ? `${(args[1] as string) ?? 'localhost'}:${first}` : String(first));
    return (originalConnect as (...a: unknown[]) => net.Socket).apply(this, args);
  } as typeof originalConnect;
  (dns as { lookup: unknown }).lookup = (...args: unknown[]) => {
    lookups.push(String(args[0]));
    return (originalLookup as (...a: unknown[]) => unknown)(...args);
  };
  (dns.promises as { lookup: unknown }).lookup = (...args: unknown[]) => {
    lookups.push(String(args[0]));
    return (originalPromiseLookup as (...a: unknown[]) => unknown)(...args);
  };
  try {
    for (const stream of [false, true]) {
      const o = await h.createReplay(openaiRun.tape.run);
      for (const call of openaiRun.calls) await callOpenAi(openAiClient(o.base_urls.openai), call, stream);
      const a = await h.createReplay(anthropicRun.tape.run);
      for (const call of anthropicRun.calls) await callAnthropic(anthropicClient(a.base_urls.anthropic), call, stream);
      expect((await h.status(o.id)).served).toBe(openaiRun.calls.length);
      expect((await h.status(a.id)).served).toBe(anthropicRun.calls.length);
    }
  } finally {
    net.Socket.prototype.connect = originalConnect;
    (dns as { lookup: unknown }).lookup = originalLookup;
    (dns.promises as { lookup: unknown }).lookup = originalPromiseLookup;
  }
  expect(targets.length).toBeGreaterThan(0); // the instrument saw the client's own connections
  expect(new Set(targets)).toEqual(new Set([`127.0.0.1:${h.port}`]));
  expect(lookups.filter((host) => host !== '127.0.0.1')).toEqual([]);
});
