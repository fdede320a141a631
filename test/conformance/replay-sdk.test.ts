/**
 * NOTE: conformance of the replay proxy with the official SDKs. The openai and
 * @anthropic-ai/sdk packages, unmodified, run recorded runs (hand-built tapes from the corpus
 * ground truth) against a replay on a real loopback port, plain and streamed, and must get back
 * exactly what was recorded. Matching, rendering and bounds in detail are in test/unit/replay.
 */
import type Anthropic from '@anthropic-ai/sdk';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureNames, loadFixture, type ReplayHarness, startReplayServer } from '../fixtures/replay/harness.js';
import {
  anthropicClient,
  callAnthropic,
  callOpenAi,
  openAiClient,
  recordedAnthropic,
  recordedOpenAi,
} from '../fixtures/replay/sdk-runs.js';

const fixtures = fixtureNames.map(loadFixture);
let h: ReplayHarness;

beforeAll(async () => {
  h = await startReplayServer({ tapes: fixtures.map((f) => f.tape) });
});
afterAll(async () => h.close());

describe.each(fixtures.map((f) => [f.source, f] as const))('a run recorded by %s', (_source, fixture) => {
  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'plain';
    it(`replays every model call ${how} through the official ${fixture.sdk} SDK with exactly the recorded answers, and reports each served and matched`, async () => {
      // arrange
      const replay = await h.createReplay(fixture.tape.run);
      expect(replay.llm_steps).toBe(fixture.calls.length);
      // act + assert, call by call, as the agent made them
      for (const call of fixture.calls) {
        if (fixture.sdk === 'openai') {
          const got = await callOpenAi(openAiClient(replay.base_urls.openai), call, stream);
          expect(got).toEqual(recordedOpenAi(call));
        } else {
          const got = await callAnthropic(anthropicClient(replay.base_urls.anthropic), call, stream);
          expect(got).toEqual(recordedAnthropic(call));
        }
      }
      const status = await h.status(replay.id);
      expect(status.served).toBe(fixture.calls.length);
      expect(status.remaining).toBe(0);
      expect(status.diverged).toBeNull();
      expect(status.calls.map((c: { step: number }) => c.step)).toEqual(fixture.calls.map((c) => c.step));
      expect(status.calls.every((c: { matched: boolean }) => c.matched)).toBe(true);
    });
  }
});

describe('credentials and versions', () => {
  it('accepts the Anthropic SDK 1.x credential (Authorization: Bearer) and version header', async () => {
    const fixture = fixtures.find((f) => f.sdk === 'anthropic')!;
    const replay = await h.createReplay(fixture.tape.run);
    await callAnthropic(anthropicClient(replay.base_urls.anthropic), fixture.calls[0], false);
    const seen = h.seen.filter((r) => r.path.endsWith(`${replay.id}/anthropic/v1/messages`));
    expect(seen[0].authorization).toBe('Bearer tapedeck-test-key');
    expect(seen[0].anthropicVersion).toBe('2026-10-21');
  });

  it('accepts x-api-key and an older anthropic-version, as the 0.x and Python SDKs send them', async () => {
    const fixture = fixtures.find((f) => f.sdk === 'anthropic')!;
    const replay = await h.createReplay(fixture.tape.run);
    const res = await fetch(`${replay.base_urls.anthropic}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify(fixture.calls[0].request),
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { content: { id: string }[] }).content[1].id).toBe(
      fixture.calls[0].response.content[1].id,
    );
  });
});

describe('raw stream iteration, as agents that do not use the stream helpers read it', () => {
  it('yields OpenAI chunks ending with the usage chunk and stops at [DONE] with the connection closed', async () => {
    const fixture = fixtures.find((f) => f.source === 'otel-genai-openai/multi-tool')!;
    const replay = await h.createReplay(fixture.tape.run);
    const client = openAiClient(replay.base_urls.openai);
    const { stream: _s, stream_options: _o, ...params } = fixture.calls[0].request;
    const chunks: OpenAI.Chat.Completions.ChatCompletionChunk[] = [];
    const stream = await client.chat.completions.create({
      ...params,
      stream: true,
      stream_options: { include_usage: true },
    });
    for await (const chunk of stream as unknown as AsyncIterable<OpenAI.Chat.Completions.ChatCompletionChunk>)
      chunks.push(chunk);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    const calls = new Map<number, { id?: string; name?: string; args: string }>();
    for (const c of chunks)
      for (const t of c.choices[0]?.delta.tool_calls ?? []) {
        const acc = calls.get(t.index) ?? { args: '' };
        acc.id ??= t.id;
        acc.name ??= t.function?.name;
        acc.args += t.function?.arguments ?? '';
        calls.set(t.index, acc);
      }
    const recorded = recordedOpenAi(fixture.calls[0]);
    expect([...calls.values()]).toEqual(recorded.toolCalls.map((t) => ({ id: t.id, name: t.name, args: t.arguments })));
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage).toMatchObject(recorded.usage);
    expect(chunks.at(-2)!.choices[0].finish_reason).toBe('tool_calls');
  });

  it('yields the Anthropic events in order, with tool input as input_json_delta pieces', async () => {
    const fixture = fixtures.find((f) => f.source === 'openllmetry-anthropic/multi-tool')!;
    const replay = await h.createReplay(fixture.tape.run);
    const client = anthropicClient(replay.base_urls.anthropic);
    const { stream: _s, ...params } = fixture.calls[0].request;
    const types: string[] = [];
    const json = new Map<number, string>();
    const events = await client.messages.create({ ...params, stream: true });
    for await (const event of events as unknown as AsyncIterable<Anthropic.RawMessageStreamEvent>) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'input_json_delta')
        json.set(event.index, (json.get(event.index) ?? '') + event.delta.partial_json);
    }
    expect(types[0]).toBe('message_start');
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect([...json.values()].map((j) => JSON.parse(j))).toEqual([{ city: 'Paris' }, { city: 'Lyon' }]);
  });
});
