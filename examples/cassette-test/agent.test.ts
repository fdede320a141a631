/**
 * Replay as a test: the example agent (agent.mjs, the official OpenAI SDK in a tool loop) runs
 * against the committed cassette weather.cassette.tar with zero model calls and no database.
 * It passes while the agent asks what the recording asked; change SYSTEM_PROMPT in agent.mjs
 * and it fails with the first mismatching path (step 0, message 0, field content).
 */
import OpenAI from 'openai';
import { replayCassette, ReplayMismatch } from 'tapedeck/testing';
import { afterEach, expect, it } from 'vitest';
import { runWeatherAgent, SYSTEM_PROMPT } from './agent.mjs';

const CASSETTE = new URL('./weather.cassette.tar', import.meta.url).pathname;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

async function replay() {
  const r = await replayCassette(CASSETTE);
  closers.push(r.close);
  return { r, client: new OpenAI({ baseURL: r.baseUrls.openai, apiKey: 'replay', maxRetries: 0 }) };
}

it('the agent replays its recorded run', async () => {
  const { r, client } = await replay();
  // A divergence is refused (409); assertReplayed then says where the agent parted.
  const answer = await runWeatherAgent(client).catch((error: Error) => error);
  await r.assertReplayed();
  expect(answer).toBe("It's 18°C and partly cloudy in Paris right now.");
});

it('a changed system prompt fails with the first mismatching path', async () => {
  const { r, client } = await replay();
  await runWeatherAgent(client, { systemPrompt: `${SYSTEM_PROMPT} Be cheerful.` }).catch(() => {});
  const failure = await r.assertReplayed().catch((error: unknown) => error);
  expect(failure).toBeInstanceOf(ReplayMismatch);
  expect((failure as ReplayMismatch).path).toMatchObject({ step: 0, message: 0, role: 'system', field: 'content' });
  expect((failure as Error).message).toMatch(/^the agent diverged from the recording at step 0, message 0 \(system\), field content/);
});
