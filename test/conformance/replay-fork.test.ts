/**
 * NOTE: forks through the official openai and @anthropic-ai/sdk clients against a running
 * tapedeck whose upstreams are a scripted stand-in provider on loopback
 * (examples/replay/stand-in-model.mjs). The origin runs are corpus captures (OpenLLMetry
 * weather runs, OpenAI and Anthropic). Each fork replays the recorded model call before its
 * step, serves the edited answer at it, then forwards the agent's follow-up calls live, plain
 * and streamed; the stand-in counts what reached it, so nothing before the step may. The fork
 * must then read back as a run of its own: tape, runs list, forks list, tree and diff.
 * Refusals without an upstream use the replay routes alone (no database needed).
 */
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStandInModel } from '../../examples/replay/stand-in-model.mjs';
import { databaseKinds } from '../helpers/databases.js';
import { FIXTURE_ROOT, readGroundTruth } from '../helpers/corpus.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';
import { ingestRecords, loadCaptureRecords } from '../unit/runs/store-fixtures.js';
import { loadFixture, startReplayServer } from '../fixtures/replay/harness.js';
import { docBlocks } from '../helpers/doc-examples.js';
import { freePort } from '../faults/support/served-tapedeck.js';

type Any = any;
type StandIn = Awaited<ReturnType<typeof startStandInModel>>;

const JSON_HEADERS = { 'content-type': 'application/json' };
const EDITED = 'EDITED: it is raining in Paris, take an umbrella.';
const capture = (layout: string) => ({ layout, scenario: 'weather', dir: path.join(FIXTURE_ROOT, layout, 'weather') });
const modelCalls = (layout: string) =>
  readGroundTruth(capture(layout).dir).steps.filter((s) => s.type === 'model_call') as Any[];
const withoutStream = ({ stream: _s, stream_options: _o, ...rest }: Any) => rest;

async function getJson(url: string): Promise<Any> {
  const res = await fetch(url);
  // nanosecond integers past 2^53 are read as text
  const text = (await res.text()).replace(/"(\w+_ns)":(\d{16,})/g, '"$1":"$2"');
  return { status: res.status, body: JSON.parse(text) };
}

async function createFork(t: TestTapedeck, run: string, fork: Any): Promise<Any> {
  const res = await fetch(`${t.url}/v1/replays`, {
    method: 'POST',
    headers: JSON_HEADERS,
    body: JSON.stringify({ run, fork }),
  });
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(201);
  return body;
}

async function openAiCall(client: OpenAI, params: Any, stream: boolean): Promise<Any> {
  const completion: Any = stream
    ? await client.chat.completions
        .stream({ ...withoutStream(params), stream: true, stream_options: { include_usage: true } })
        .finalChatCompletion()
    : await client.chat.completions.create(withoutStream(params));
  return completion.choices[0].message;
}

async function anthropicCall(client: Anthropic, params: Any, stream: boolean): Promise<Any> {
  return stream
    ? await client.messages.stream(withoutStream(params)).finalMessage()
    : await client.messages.create(withoutStream(params));
}

/** The fork's run as the read API gives it back, with what it says about its origin. */
async function readFork(t: TestTapedeck, origin: string, forkRun: string) {
  const tape = (await getJson(`${t.url}/v1/tapes/${forkRun}`)).body;
  const originTape = (await getJson(`${t.url}/v1/tapes/${origin}`)).body;
  const forks = (await getJson(`${t.url}/v1/runs/${origin}/forks`)).body;
  const tree = (await getJson(`${t.url}/v1/runs/${origin}/tree`)).body;
  const diff = (await getJson(`${t.url}/v1/diff?a=${origin}&b=${forkRun}`)).body;
  const runs = (await getJson(`${t.url}/v1/runs?limit=1000`)).body;
  return { tape, originTape, forks, tree, diff, runs };
}

describe.each(databaseKinds)('forks on %s', (kind) => {
  let t: TestTapedeck;
  let standIn: StandIn;

  beforeAll(async () => {
    standIn = await startStandInModel();
    t = await startTestTapedeck(kind, {
      upstreamOpenai: `${standIn.url}/v1`,
      upstreamOpenaiKey: 'sk-upstream',
      upstreamAnthropic: standIn.url,
      upstreamAnthropicKey: 'ak-upstream',
    });
    for (const layout of ['openllmetry-openai', 'openllmetry-anthropic'])
      await ingestRecords(t.running.store, await loadCaptureRecords(capture(layout)));
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await standIn?.close();
  });

  for (const stream of [false, true]) {
    const how = stream ? 'streamed' : 'plain';

    it(`OpenAI SDK, ${how}: the recorded call before the step, the edited answer at it, live calls after, recorded as a new run`, async () => {
      const origin = 'sess-openllmetry-openai-weather';
      const [first, second] = modelCalls('openllmetry-openai');
      const fork = await createFork(t, origin, { at_step: 3, answer: { role: 'assistant', content: EDITED } });
      expect(fork.fork).toEqual({
        run: expect.stringMatching(/^fork_[0-9a-f]{16}$/),
        at_step: 3,
        edited_answer: true,
        upstreams: { openai: true, anthropic: true },
      });
      const client = new OpenAI({
        baseURL: new URL(fork.base_urls.openai, t.url).href,
        apiKey: 'agent-key',
        maxRetries: 0,
      });
      const seenBefore = standIn.requests.length;
      const connectionsBefore = standIn.connections;

      // step 1, recorded: the recording's own tool call
      const recorded = await openAiCall(client, first.request, stream);
      expect(recorded.tool_calls.map((c: Any) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual(
        first.response.choices[0].message.tool_calls.map((c: Any) => [c.id, c.function.name, { city: 'Paris' }]),
      );
      // step 3: the edited answer, in place of the recorded one
      const edited = await openAiCall(client, second.request, stream);
      expect(edited.content).toBe(EDITED);
      expect([standIn.requests.length, standIn.connections]).toEqual([seenBefore, connectionsBefore]);

      // past the step: live, to the stand-in
      const followUp = [
        ...second.request.messages,
        { role: 'assistant', content: EDITED },
        { role: 'user', content: 'And in Lyon?' },
      ];
      const live1 = await openAiCall(client, { ...second.request, messages: followUp }, stream);
      expect(live1.tool_calls.map((c: Any) => [c.function.name, c.function.arguments])).toEqual([
        ['get_weather', '{"city":"Lyon"}'],
      ]);
      const toolResult = {
        role: 'tool',
        tool_call_id: live1.tool_calls[0].id,
        content: '{"city":"Lyon","celsius":9,"sky":"rainy"}',
      };
      const followUp2 = [...followUp, { role: 'assistant', content: null, tool_calls: live1.tool_calls }, toolResult];
      const live2 = await openAiCall(client, { ...second.request, messages: followUp2 }, stream);
      expect(live2.content).toBe('In Lyon it is 9 °C and rainy.');

      const reached = standIn.requests.slice(seenBefore);
      expect(reached.map((r: Any) => [r.path, r.headers.authorization, r.body.stream === true])).toEqual([
        ['/v1/chat/completions', 'Bearer sk-upstream', stream],
        ['/v1/chat/completions', 'Bearer sk-upstream', stream],
      ]);
      expect(reached[1].body.messages).toEqual(JSON.parse(JSON.stringify(followUp2)));
      const status = (await getJson(`${t.url}/v1/replays/${fork.id}`)).body;
      expect(status.fork).toEqual({ run: fork.fork.run, at_step: 3, answer_served: true, live_calls: 2 });

      const r = await readFork(t, origin, fork.fork.run);
      expect(r.tape.steps.map((s: Any) => s.kind)).toEqual(['llm', 'llm', 'llm', 'llm']);
      // the replayed call has the origin's request and answer, so the same identities
      const originLlm = r.originTape.steps.find((s: Any) => s.index === 1);
      expect(r.tape.steps[0].request_digest).toBe(originLlm.request_digest);
      expect(r.tape.steps[1].request_digest).toBe(r.originTape.steps.find((s: Any) => s.index === 3).request_digest);
      expect(r.tape.steps[1].response).toEqual([{ role: 'assistant', content: EDITED, finish_reason: 'stop' }]);
      expect(r.tape.steps[2].response[0].tool_calls).toEqual([
        // the provider's arguments text, as recorded
        { id: live1.tool_calls[0].id, name: 'get_weather', arguments: live1.tool_calls[0].function.arguments },
      ]);
      expect(r.tape.steps[3].response[0].content).toBe('In Lyon it is 9 °C and rainy.');
      expect(r.tape.steps[3].tokens).toMatchObject({ input: 40, output: 12 });
      expect(r.forks.forks).toContainEqual(expect.objectContaining({ run: fork.fork.run, at_step: 3, spans: 4 }));
      expect(r.tree.root.children.map((c: Any) => c.run)).toContain(fork.fork.run);
      expect(r.runs.runs.map((x: Any) => x.run)).toContain(fork.fork.run);
      expect(r.tape.steps[0].response_digest).toBe(originLlm.response_digest);
      // The origin's agent and tool steps were the agent's own spans, not calls the fork
      // answered. Model calls align by signature, so the longest common subsequence pairs the
      // replayed call with step 1 and the origin's last model call with the fork's last. The
      // replayed call is a `config` change: the fork records max_tokens from the request body,
      // which this origin's instrumentation did not record. The last call was also asked
      // something else (the edited answer is in its prompt): input is checked first.
      expect(r.diff.aligned.map((a: Any) => [a.op, a.why, a.a, a.b])).toEqual([
        ['delete', 'structure', 0, null],
        ['changed', 'config', 1, 0],
        ['delete', 'structure', 2, null],
        ['insert', 'structure', null, 1],
        ['insert', 'structure', null, 2],
        ['changed', 'input', 3, 3],
      ]);
    });

    it(`Anthropic SDK, ${how}: recorded, edited, then live, recorded as a new run`, async () => {
      const origin = 'sess-openllmetry-anthropic-weather';
      const [first, second] = modelCalls('openllmetry-anthropic');
      const originTape = (await getJson(`${t.url}/v1/tapes/${origin}`)).body;
      const llm = originTape.steps.filter((s: Any) => s.kind === 'llm').map((s: Any) => s.index);
      const fork = await createFork(t, origin, { at_step: llm[1], answer: { content: EDITED } });
      const client = new Anthropic({
        baseURL: new URL(fork.base_urls.anthropic, t.url).href,
        apiKey: 'agent-key',
        maxRetries: 0,
      });
      const seenBefore = standIn.requests.length;

      const recorded = await anthropicCall(client, first.request, stream);
      expect(recorded.content).toEqual(first.response.content);
      const edited = await anthropicCall(client, second.request, stream);
      expect(edited.content).toEqual(
        [{ type: 'text', text: EDITED, citations: null }].map(({ citations: _c, ...b }) => b),
      );
      expect(standIn.requests.length).toBe(seenBefore);

      const followUp = [
        ...second.request.messages,
        { role: 'assistant', content: EDITED },
        { role: 'user', content: 'And in Lyon?' },
      ];
      const live = await anthropicCall(client, { ...second.request, messages: followUp }, stream);
      expect(live.content).toMatchObject([{ type: 'tool_use', name: 'get_weather', input: { city: 'Lyon' } }]);
      expect(live.stop_reason).toBe('tool_use');
      const reached = standIn.requests.slice(seenBefore);
      expect(reached.map((r: Any) => [r.path, r.headers['x-api-key'], r.headers['anthropic-version']])).toEqual([
        ['/v1/messages', 'ak-upstream', expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/)],
      ]);

      const r = await readFork(t, origin, fork.fork.run);
      expect(r.tape.steps.map((s: Any) => s.kind)).toEqual(['llm', 'llm', 'llm']);
      expect(r.tape.steps[0].request).toEqual(originTape.steps.find((s: Any) => s.index === llm[0]).request);
      expect(r.tape.steps[2].response[0].tool_calls).toEqual([
        { id: live.content[0].id, name: 'get_weather', arguments: { city: 'Lyon' } },
      ]);
      expect(r.forks.forks).toContainEqual(expect.objectContaining({ run: fork.fork.run, at_step: llm[1] }));
      expect(r.diff.aligned.filter((a: Any) => a.b !== null).map((a: Any) => [a.op, a.a, a.b])).toEqual([
        ['changed', llm[0], 0],
        ['insert', null, 1],
        ['changed', llm[1], 2],
      ]);
    });
  }

  it('answers the worked example of docs/forks.md as written', async () => {
    const blocks = Object.fromEntries(docBlocks('docs/forks.md').map((b) => [b.role, b.text]));
    const normalized = (text: string) =>
      JSON.parse(
        text
          .replace(/rp_[0-9a-f]{32}/g, 'rp_ID')
          .replace(/fork_[0-9a-f]{16}/g, 'fork_ID')
          .replace(/http:\/\/[\w.]+:\d+/g, 'http://HOST')
          .replace(/"(\w+_ns)":\s*"?\d+"?/g, '"$1":0'),
      );
    const res = await fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: JSON_HEADERS,
      body: blocks['fork-create'],
    });
    const created = await res.text();
    expect(res.status).toBe(201);
    expect(normalized(created)).toEqual(normalized(blocks['fork-created']));
    const fork = JSON.parse(created);
    const [first, second] = modelCalls('openllmetry-openai');
    const client = new OpenAI({
      baseURL: new URL(fork.base_urls.openai, t.url).href,
      apiKey: 'agent-key',
      maxRetries: 0,
    });
    await openAiCall(client, first.request, false);
    await openAiCall(client, second.request, false);
    const followUp = [
      ...second.request.messages,
      { role: 'assistant', content: EDITED },
      { role: 'user', content: 'And in Lyon?' },
    ];
    await openAiCall(client, { ...second.request, messages: followUp }, false);
    const status = await (await fetch(`${t.url}/v1/replays/${fork.id}`)).text();
    expect(normalized(status)).toEqual(normalized(blocks['fork-status']));
    const origin = JSON.parse(blocks['fork-create']).run;
    const forks = JSON.parse(
      (await (await fetch(`${t.url}/v1/runs/${origin}/forks`)).text()).replace(
        /"first_start_ns":(\d+)/g,
        '"first_start_ns":"$1"',
      ),
    );
    const listed = forks.forks.find((f: Any) => f.run === fork.fork.run);
    expect(normalized(JSON.stringify({ ...forks, forks: [listed] }))).toEqual(normalized(blocks['forks-listed']));
  });

  it('goes live at its step when no edited answer is given', async () => {
    const origin = 'sess-openllmetry-openai-weather';
    const [first] = modelCalls('openllmetry-openai');
    const fork = await createFork(t, origin, { at_step: 1 });
    const seenBefore = standIn.requests.length;
    const client = new OpenAI({
      baseURL: new URL(fork.base_urls.openai, t.url).href,
      apiKey: 'agent-key',
      maxRetries: 0,
    });
    const message = await openAiCall(client, first.request, false);
    expect(message.tool_calls[0].id).toMatch(/^call_standin/);
    expect(standIn.requests.length).toBe(seenBefore + 1);
  });

  it('refuses a step that is not a model step, or an answer that is not an assistant message, naming it', async () => {
    const origin = 'sess-openllmetry-openai-weather';
    for (const [fork, message] of [
      [
        { at_step: 2 },
        'fork: at_step 2 is not a model step of run sess-openllmetry-openai-weather (its model steps are 1, 3)',
      ],
      [{ at_step: -1 }, 'fork: at_step must be a step index (a whole number >= 0), not -1'],
      [
        { at_step: 1, answer: { role: 'user', content: 'x' } },
        'fork: answer is the model\'s, so its role is "assistant", not "user"',
      ],
      [{ at_step: 1, answer: {} }, 'fork: answer says nothing: give it content or tool_calls'],
    ] as const) {
      const res = await fetch(`${t.url}/v1/replays`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ run: origin, fork }),
      });
      expect([res.status, ((await res.json()) as Any).error]).toEqual([400, { type: 'bad_input', message }]);
    }
  });
});

describe('a fork with no upstream configured', () => {
  it('serves the recorded and edited answers, then refuses the next call, sending nothing anywhere', async () => {
    const fixture = loadFixture('openllmetry-openai--weather');
    const outbound: string[] = [];
    const recorded: Any[] = [];
    const h = await startReplayServer({
      tapes: [fixture.tape],
      deps: {
        recordSpans: async (spans) => {
          recorded.push(...spans);
        },
        fetch: (async (url: string) => {
          outbound.push(String(url));
          throw new Error('no outbound call may happen');
        }) as Any,
      },
    });
    try {
      const llm = fixture.tape.steps.filter((s) => s.kind === 'llm').map((s) => s.index);
      const res = await fetch(`${h.url}/v1/replays`, {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ run: fixture.tape.run, fork: { at_step: llm[1], answer: { content: EDITED } } }),
      });
      const fork: Any = await res.json();
      expect(fork.fork.upstreams).toEqual({ openai: false, anthropic: false });
      const client = new OpenAI({ baseURL: new URL(fork.base_urls.openai, h.url).href, apiKey: 'k', maxRetries: 2 });
      await client.chat.completions.create(fixture.calls[0].request);
      expect((await client.chat.completions.create(fixture.calls[1].request)).choices[0].message.content).toBe(EDITED);
      const refused: Any = await client.chat.completions.create(fixture.calls[1].request).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(OpenAI.ConflictError);
      expect(refused.error).toMatchObject({ type: 'upstream_not_configured' });
      expect(refused.error.message).toContain('no openai upstream is configured (--upstream-openai); nothing was sent');
      expect(outbound).toEqual([]);
      expect(h.seen.filter((r) => r.path.endsWith('/chat/completions'))).toHaveLength(3); // x-should-retry: false held
      expect(recorded.map((s) => s.attributes['tapedeck.fork.source'])).toEqual(['recorded', 'edited']);
    } finally {
      await h.close();
    }
  });
});

describe('a fork whose upstream fails', () => {
  it('answers 503 upstream_unavailable while its upstream is down, unmoved, then live; passes an upstream error on', async () => {
    // arrange: an upstream address where nothing listens yet
    const port = await freePort();
    const t = await startTestTapedeck('pglite', {
      upstreamOpenai: `http://127.0.0.1:${port}/v1`,
      upstreamOpenaiKey: 'sk-upstream',
    });
    let upstream: { close(): Promise<void> } | undefined;
    try {
      await ingestRecords(t.running.store, await loadCaptureRecords(capture('openllmetry-openai')));
      const origin = 'sess-openllmetry-openai-weather';
      const [first, second] = modelCalls('openllmetry-openai');
      const fork = await createFork(t, origin, { at_step: 3, answer: { role: 'assistant', content: EDITED } });
      const base = new URL(fork.base_urls.openai, t.url).href;
      const client = new OpenAI({ baseURL: base, apiKey: 'agent-key', maxRetries: 0 });
      await openAiCall(client, first.request, false);
      await openAiCall(client, second.request, false);
      const live = JSON.stringify({
        ...withoutStream(second.request),
        messages: [
          ...second.request.messages,
          { role: 'assistant', content: EDITED },
          { role: 'user', content: 'And in Lyon?' },
        ],
      });
      const send = () => fetch(`${base}/chat/completions`, { method: 'POST', headers: JSON_HEADERS, body: live });
      const forkSteps = async () => (await getJson(`${t.url}/v1/tapes/${fork.fork.run}`)).body.steps;

      // act, assert: unreachable: retryable, and the fork has not moved
      const down = await send();
      expect([down.status, down.headers.get('retry-after')]).toEqual([503, '5']);
      expect(((await down.json()) as Any).error).toEqual({
        type: 'upstream_unavailable',
        message: 'the openai upstream could not be reached; the fork has not moved, retry the call',
      });
      expect((await getJson(`${t.url}/v1/replays/${fork.id}`)).body.fork).toMatchObject({ live_calls: 0 });
      expect(await forkSteps()).toHaveLength(2);

      // the upstream comes up: the same call goes live
      const standIn = await startStandInModel(port);
      upstream = standIn;
      const up = await send();
      expect(up.status).toBe(200);
      expect(((await up.json()) as Any).choices[0].message.tool_calls[0].function.arguments).toBe('{"city":"Lyon"}');
      expect(standIn.requests).toHaveLength(1);
      expect((await getJson(`${t.url}/v1/replays/${fork.id}`)).body.fork).toMatchObject({ live_calls: 1 });
      await standIn.close();

      // the upstream's own error reaches the agent as it came, and is recorded as an errored step
      const limited = '{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}';
      const refusing = http.createServer((_req, res) => {
        res.writeHead(429, { 'content-type': 'application/json' });
        res.end(limited);
      });
      await new Promise<void>((resolve) => refusing.listen(port, '127.0.0.1', resolve));
      upstream = {
        close: () => new Promise<void>((resolve) => (refusing.closeAllConnections(), refusing.close(() => resolve()))),
      };
      const error = await send();
      expect([error.status, await error.text()]).toEqual([429, limited]);
      const steps = await forkSteps();
      expect(steps.map((s: Any) => s.status)).toEqual(['ok', 'ok', 'ok', 'error']);
    } finally {
      await upstream?.close();
      await t.close();
    }
  });
});
