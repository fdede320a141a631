/**
 * NOTE: strict matching as the official SDKs meet it: a changed prompt is refused with
 * replay_divergence, which neither SDK retries even with its default retry policy; a swapped
 * pair of concurrent calls is a divergence; a run recorded in one provider's shape replays for
 * an agent speaking the other's when the messages are the same.
 */
import { APIError as AnthropicAPIError } from '@anthropic-ai/sdk';
import { APIError as OpenAIAPIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Step, Tape } from '../../src/normalize/step.js';
import { cloneTape, loadFixture, type ReplayHarness, startReplayServer } from '../fixtures/replay/harness.js';
import { anthropicClient, callOpenAi, openAiClient, recordedAnthropic } from '../fixtures/replay/sdk-runs.js';

const openaiRun = loadFixture('openllmetry-openai--weather');
const anthropicRun = loadFixture('openinference-anthropic--weather');

/** Two model calls an agent makes at once (steps 0 and 1), then nothing else. */
function concurrentPair(): Tape {
  const tape = cloneTape(openaiRun.tape);
  const first = tape.steps[0];
  const second: Step = { ...cloneTape(openaiRun.tape).steps[0], index: 1, span_id: 'span-1b' };
  (second.request as { content: string }[])[1].content = "What's the weather in Lyon right now?";
  return { ...tape, run: 'concurrent-pair', steps: [first, second] };
}

let h: ReplayHarness;

beforeAll(async () => {
  h = await startReplayServer({ tapes: [openaiRun.tape, anthropicRun.tape] });
});
afterAll(async () => h.close());

// eslint-disable-next-line @typescript-eslint/no-explicit-any
function changedSystemPrompt(request: any): any {
  const edited = structuredClone(request);
  edited.messages[0].content = 'You are a verbose weather assistant.';
  return edited;
}

describe('a changed system prompt', () => {
  it('is refused 409 replay_divergence at step 0, naming message 0, role system, field content and the character, and the OpenAI SDK does not retry it', async () => {
    const replay = await h.createReplay(openaiRun.tape.run);
    const client = openAiClient(replay.base_urls.openai, 'default'); // the SDK's own retry policy: 409 is retried unless told not to
    const before = h.seen.length;
    const err = await client.chat.completions
      .create(changedSystemPrompt(openaiRun.calls[0].request))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAIAPIError);
    const apiErr = err as InstanceType<typeof OpenAIAPIError>;
    expect(apiErr.status).toBe(409);
    expect(apiErr.headers?.get('x-should-retry')).toBe('false');
    expect(apiErr.type).toBe('replay_divergence');
    const body = apiErr.error as Record<string, unknown>;
    expect(body.step).toBe(0);
    expect(body.expected_digest).toBe(openaiRun.tape.steps[0].request_digest);
    expect(body.got_digest).toMatch(/^[0-9a-f]{64}$/);
    expect(body.difference).toEqual({
      message: 0,
      role: 'system',
      field: 'content',
      at_char: 10,
      recorded:
        'You are a concise weather assistant. Use the get_weather tool for current conditions, then answer in one sentence.',
      got: 'You are a verbose weather assistant.',
    });
    expect(h.seen.length - before).toBe(1); // one request: no retry
    const status = await h.status(replay.id);
    expect(status.served).toBe(0);
    expect(status.remaining).toBe(2);
    expect(status.diverged).toMatchObject({
      step: 0,
      difference: { message: 0, role: 'system', field: 'content', at_char: 10 },
    });
  });

  it('is refused the same way to the Anthropic SDK, which does not retry it either', async () => {
    const replay = await h.createReplay(anthropicRun.tape.run);
    const client = anthropicClient(replay.base_urls.anthropic, 'default');
    const request = structuredClone(anthropicRun.calls[0].request);
    request.system = 'You are a verbose weather assistant.';
    const before = h.seen.length;
    const err = await client.messages.create(request).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AnthropicAPIError);
    expect((err as InstanceType<typeof AnthropicAPIError>).status).toBe(409);
    const body = (err as { error: { error: Record<string, unknown> } }).error.error;
    expect(body.type).toBe('replay_divergence');
    expect(body.difference).toMatchObject({ message: 0, role: 'system', field: 'content', at_char: 10 });
    expect(h.seen.length - before).toBe(1);
  });

  it('control: without x-should-retry: false the same SDK does retry a 409, so the header is what stops it', async () => {
    const { serve } = await import('@hono/node-server');
    const { Hono } = await import('hono');
    let calls = 0;
    const app = new Hono().post('/v1/chat/completions', (c) => {
      calls++;
      return c.json({ error: { type: 'conflict', message: 'busy' } }, 409, { 'retry-after-ms': '1' });
    });
    const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
      const s = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, () => resolve(s));
    });
    try {
      const port = (server.address() as { port: number }).port;
      await expect(
        openAiClient(`http://127.0.0.1:${port}/v1`, 'default').chat.completions.create(openaiRun.calls[0].request),
      ).rejects.toThrow();
      expect(calls).toBe(3);
    } finally {
      server.close();
    }
  });

  it('does not consume the step: the recorded request still gets the recorded answer afterwards', async () => {
    const replay = await h.createReplay(openaiRun.tape.run);
    const client = openAiClient(replay.base_urls.openai);
    await expect(client.chat.completions.create(changedSystemPrompt(openaiRun.calls[0].request))).rejects.toThrow();
    const got = await callOpenAi(client, openaiRun.calls[0], false);
    expect(got.toolCalls[0].id).toBe('call_7w50k7Zc7pEwJE9VM3wenGVq');
    const status = await h.status(replay.id);
    expect(status.served).toBe(1);
    expect(status.diverged.step).toBe(0); // the first divergence is remembered
  });
});

describe('concurrent calls', () => {
  it('reports a swapped pair as a divergence in strict mode and serves the other call after it, in turn', async () => {
    // The divergence explainer re-reads the recording (the second load); holding that read holds
    // the first call's turn, so the second call provably arrives while the first is in its turn.
    const tape = concurrentPair();
    let loads = 0;
    let release!: () => void;
    const held = new Promise<void>((r) => {
      release = r;
    });
    let rereadStarted!: () => void;
    const rereading = new Promise<void>((r) => {
      rereadStarted = r;
    });
    const pair = await startReplayServer({
      deps: {
        loadTape: async () => {
          if (++loads === 2) {
            rereadStarted();
            await held;
          }
          return tape;
        },
      },
    });
    try {
      const replay = await pair.createReplay(tape.run);
      const client = openAiClient(replay.base_urls.openai);
      const askParis = openaiRun.calls[0].request;
      const askLyon = { ...askParis, messages: structuredClone(tape.steps[1].request) };
      const order: string[] = [];
      // Lyon, recorded second, arrives first
      const lyon = client.chat.completions.create(askLyon).then(
        () => undefined,
        (e: unknown) => {
          order.push('lyon');
          return e;
        },
      );
      await rereading;
      const paris = client.chat.completions.create(askParis).then((r) => {
        order.push('paris');
        return r;
      });
      while (pair.seen.filter((r) => r.path.endsWith('/chat/completions')).length < 2)
        await new Promise((r) => setTimeout(r, 5));
      release();
      const [lyonErr, parisRes] = await Promise.all([lyon, paris]);
      expect(lyonErr).toBeInstanceOf(OpenAIAPIError);
      const err = lyonErr as InstanceType<typeof OpenAIAPIError>;
      expect(err.status).toBe(409);
      expect(err.type).toBe('replay_divergence');
      expect((err.error as { step: number }).step).toBe(0);
      expect(parisRes.choices[0].message.tool_calls![0].id).toBe('call_7w50k7Zc7pEwJE9VM3wenGVq');
      expect(order).toEqual(['lyon', 'paris']);
      const status = await pair.status(replay.id);
      expect(status.calls).toHaveLength(1);
      expect(status.calls[0]).toMatchObject({ step: 0, matched: true });
      expect(status.diverged).toMatchObject({
        step: 0,
        difference: { message: 1, role: 'user', field: 'content', at_char: 22 },
      });
    } finally {
      release();
      await pair.close();
    }
  });
});

describe('a run recorded through one provider shape', () => {
  it("replays in strict mode for an agent speaking the other provider's wire when the messages are the same", async () => {
    // recorded through the Anthropic SDK; the agent now speaks OpenAI chat completions
    const replay = await h.createReplay(anthropicRun.tape.run);
    const client = openAiClient(replay.base_urls.openai);
    const recorded = recordedAnthropic(anthropicRun.calls[0]);
    const first = await client.chat.completions.create({
      model: 'claude-sonnet-4-6',
      messages: [
        { role: 'system', content: anthropicRun.calls[0].request.system },
        { role: 'user', content: "What's the weather in Paris right now?" },
      ],
    });
    expect(first.choices[0].message.content).toBe(recorded.text);
    const call = first.choices[0].message.tool_calls![0] as {
      id: string;
      function: { name: string; arguments: string };
    };
    expect(call.id).toBe(recorded.toolCalls[0].id);
    expect(JSON.parse(call.function.arguments)).toEqual({ city: 'Paris' });
    const second = await client.chat.completions.create({
      model: 'claude-sonnet-4-6',
      messages: [
        { role: 'system', content: anthropicRun.calls[0].request.system },
        { role: 'user', content: "What's the weather in Paris right now?" },
        first.choices[0].message as never,
        {
          role: 'tool',
          tool_call_id: call.id,
          content: '{"city":"Paris","temperature_c":18,"condition":"partly cloudy","humidity_pct":62}',
        },
      ],
    });
    expect(second.choices[0].message.content).toBe(recordedAnthropic(anthropicRun.calls[1]).text);
    const status = await h.status(replay.id);
    expect(status.calls.map((c: { matched: boolean }) => c.matched)).toEqual([true, true]);
  });

  it('replays an OpenAI-recorded run for an agent speaking Anthropic messages when the messages are the same', async () => {
    const replay = await h.createReplay(openaiRun.tape.run);
    const client = anthropicClient(replay.base_urls.anthropic);
    const [system, user] = openaiRun.calls[0].request.messages;
    const first = await client.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 512,
      system: system.content,
      messages: [user],
    });
    const toolUse = first.content.find((b) => b.type === 'tool_use') as { id: string; name: string; input: unknown };
    expect(toolUse).toMatchObject({
      id: 'call_7w50k7Zc7pEwJE9VM3wenGVq',
      name: 'get_weather',
      input: { city: 'Paris' },
    });
    expect(first.stop_reason).toBe('tool_use');
    const second = await client.messages.create({
      model: 'gpt-4o-mini',
      max_tokens: 512,
      system: system.content,
      messages: [
        user,
        { role: 'assistant', content: first.content as never },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: toolUse.id,
              content: '{"city":"Paris","temperature_c":18,"condition":"partly cloudy","humidity_pct":62}',
            },
          ],
        },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: openaiRun.calls[1].response.choices[0].message.content }]);
    expect((await h.status(replay.id)).calls.map((c: { matched: boolean }) => c.matched)).toEqual([true, true]);
  });
});
