/** In-memory calls to the replay routes (app.request, no socket) with a clock the test moves. */
import type { Hono } from 'hono';
import type { Tape } from '../../../src/normalize/step.js';
import {
  buildApp,
  cloneTape,
  type HarnessOptions,
  loadFixture,
  MemoryPayloads,
} from '../../fixtures/replay/harness.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

export const weather = loadFixture('openllmetry-openai--weather');
export const anthropicWeather = loadFixture('openinference-anthropic--weather');

export interface Reply {
  status: number;
  headers: Headers;
  body: Any;
  text: string;
}

export class Clock {
  ns = 1_800_000_000_000_000_000n;
  readonly now = (): bigint => this.ns;
  advanceSeconds(s: number): void {
    this.ns += BigInt(s) * 1_000_000_000n;
  }
}

export interface TestApp {
  app: Hono;
  clock: Clock;
  payloads: MemoryPayloads;
  tapes: Map<string, Tape>;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  create(run: string, mode?: string, headers?: Record<string, string>): Promise<Reply>;
  /** POSTs the recorded request of the fixture call with this index to the replay. */
  ask(id: string, callIndex?: number, over?: Record<string, unknown>): Promise<Reply>;
}

export function testApp(opts: HarnessOptions & { tapes?: Tape[] } = {}): TestApp {
  const clock = new Clock();
  const payloads = opts.payloads ?? new MemoryPayloads();
  const { app, tapes } = buildApp({
    ...opts,
    payloads,
    tapes: opts.tapes ?? [cloneTape(weather.tape)],
    deps: { now: clock.now, ...opts.deps },
  });
  const call = async (
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<Reply> => {
    const res = await app.request(path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: res.status, headers: res.headers, body: parsed, text };
  };
  return {
    app,
    clock,
    payloads,
    tapes,
    call,
    create: (run, mode, headers) => call('POST', '/v1/replays', mode === undefined ? { run } : { run, mode }, headers),
    ask: (id, callIndex = 0, over = {}) =>
      call('POST', `/v1/replays/${id}/openai/v1/chat/completions`, { ...weather.calls[callIndex].request, ...over }),
  };
}

/** The error body's inner object, after checking the envelope is exactly {"error": {...}}. */
export function errorOf(reply: Reply): Any {
  if (!reply.body || Object.keys(reply.body).join() !== 'error') throw new Error(`not an error body: ${reply.text}`);
  return reply.body.error;
}
