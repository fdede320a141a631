/**
 * Three `tapedeck serve` processes (the built CLI) on one PostgreSQL database and one
 * S3-compatible payload store, started together, taking one stream of exports round-robin:
 * the real captures of the corpus (HTTP bodies byte for byte, gRPC messages through a grpc-js
 * client) and generated batches. Every export is sent again to a different instance (a
 * redelivery), and one instance is killed with SIGKILL mid-stream: a sender whose instance
 * fails moves to the next one, as a Collector's retry does. Afterwards every span sent is
 * stored exactly once, every payload over the threshold is in the bucket, and every run's
 * tape is the same as a single instance's store of the same input.
 *
 * Then replays: one created on one instance is driven to completion through the other two by
 * the official openai and @anthropic-ai/sdk clients (plain and streamed, tools/next between),
 * its status read through each; an erasure posted to one instance withdraws a replay another
 * holds, read through the third; a replay whose instance was killed answers 503 elsewhere,
 * and one whose instance stopped gracefully 404.
 *
 * Runs on PostgreSQL only (TAPEDECK_TEST_DATABASE_URL): embedded PGlite is one process's
 * database. Build first when run alone (`npm run build`): the instances are dist/.
 */
import { mkdtempSync, readdirSync, readFileSync, existsSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Anthropic, { APIError as AnthropicAPIError } from '@anthropic-ai/sdk';
import OpenAI, { APIError as OpenAIAPIError } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPgDatabase } from '../../src/store/pg-database.js';
import type { Database } from '../../src/store/database.js';
import { type GroundTruth, readGroundTruth } from '../helpers/corpus.js';
import { createServerDatabase, databaseKinds } from '../helpers/databases.js';
import { startS3Server, type TestS3Server } from '../helpers/s3-server.js';
import {
  grpcExport,
  PROTOBUF,
  postRaw,
  randomSpanId,
  randomTraceId,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
  traceBody,
} from '../helpers/tapedeck-server.js';
import { freePort, ServedTapedeck } from '../faults/support/served-tapedeck.js';

const CORPUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'corpus');
const INSTANCES = 3;
const GENERATED_BATCHES = 20;
const SPANS_PER_BATCH = 40;

interface Export {
  name: string;
  transport: 'http' | 'grpc';
  signal: 'traces' | 'logs';
  contentType: string;
  contentEncoding: string | null;
  body: Buffer;
}

function corpusExports(): Export[] {
  const out: Export[] = [];
  for (const layout of readdirSync(CORPUS, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const scenario of readdirSync(path.join(CORPUS, layout.name), { withFileTypes: true })) {
      const dir = path.join(CORPUS, layout.name, scenario.name);
      if (!scenario.isDirectory() || !existsSync(path.join(dir, 'requests.jsonl'))) continue;
      for (const line of readFileSync(path.join(dir, 'requests.jsonl'), 'utf8').split('\n').filter(Boolean)) {
        const entry = JSON.parse(line) as Omit<Export, 'body' | 'name'> & { file: string };
        const file = path.join(dir, entry.file);
        if (!existsSync(file)) continue;
        out.push({ ...entry, name: `${layout.name}/${scenario.name}/${entry.file}`, body: readFileSync(file) });
      }
    }
  }
  return out;
}

function generatedExports(): Export[] {
  return Array.from({ length: GENERATED_BATCHES }, (_, i) => {
    const traceId = randomTraceId();
    const spans = Array.from({ length: SPANS_PER_BATCH }, () => ({ traceId, spanId: randomSpanId() }));
    return {
      name: `generated-${i}`,
      transport: 'http' as const,
      signal: 'traces' as const,
      contentType: PROTOBUF,
      contentEncoding: null,
      body: Buffer.from(traceBody(spans, 'protobuf')),
    };
  });
}

interface Target {
  url: string;
  grpcAddress: string;
}

/** Sends one export to one instance; true when it was acknowledged. */
async function send(target: Target, e: Export): Promise<boolean> {
  if (e.transport === 'grpc') {
    const answer = await grpcExport(target.grpcAddress, e.signal, e.body).catch(() => undefined);
    return answer?.code === 0;
  }
  const headers: Record<string, string> = { 'content-type': e.contentType };
  if (e.contentEncoding) headers['content-encoding'] = e.contentEncoding;
  const answer = await postRaw(`${target.url}/v1/${e.signal}`, e.body, headers).catch(() => undefined);
  return answer?.status === 200;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const groundTruth = (capture: string): GroundTruth => readGroundTruth(path.join(CORPUS, capture));
const modelCalls = (g: GroundTruth) => g.steps.filter((s) => s.type === 'model_call');
const toolCalls = (g: GroundTruth) => g.steps.filter((s) => s.type === 'tool_call');

function withoutStream(request: Any): Any {
  const { stream: _stream, stream_options: _options, ...params } = request;
  return params;
}

/** The answer's text and tool calls, as the agent reads them from the SDK. */
async function openAiCall(client: OpenAI, request: Any, stream: boolean): Promise<Any> {
  const params = withoutStream(request);
  const completion: Any = stream
    ? await client.chat.completions.stream({ ...params, stream: true }).finalChatCompletion()
    : await client.chat.completions.create(params);
  const message = completion.choices[0].message;
  return {
    text: message.content ?? null,
    tools: (message.tool_calls ?? []).map((c: Any) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
  };
}

function recordedOpenAi(response: Any): Any {
  const message = response.choices[0].message;
  return {
    text: message.content ?? null,
    tools: (message.tool_calls ?? []).map((c: Any) => [c.id, c.function.name, JSON.parse(c.function.arguments)]),
  };
}

async function anthropicCall(client: Anthropic, request: Any, stream: boolean): Promise<Any> {
  const params = withoutStream(request);
  const message: Any = stream
    ? await client.messages.stream(params).finalMessage()
    : await client.messages.create(params);
  return contentOf(message.content);
}

function contentOf(content: Any[]): Any {
  const texts = content.filter((b) => b.type === 'text').map((b) => b.text);
  return {
    text: texts.length ? texts.join('') : null,
    tools: content.filter((b) => b.type === 'tool_use').map((b) => [b.id, b.name, b.input]),
  };
}

async function createReplay(instance: ServedTapedeck, run: string): Promise<Any> {
  const answer = await fetch(`${instance.url}/v1/replays`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ run }),
  });
  expect(answer.status, await answer.clone().text()).toBe(201);
  return answer.json();
}

async function getJson(url: string): Promise<{ status: number; body: Any }> {
  const answer = await fetch(url);
  return { status: answer.status, body: await answer.json() };
}

async function nextTool(instance: ServedTapedeck, id: string): Promise<Any> {
  const answer = await fetch(`${instance.url}/v1/replays/${id}/tools/next`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  expect(answer.status).toBe(200);
  return answer.json();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function readStore(db: Database): Promise<{ spans: string[]; logs: number; runs: string[] }> {
  const spans = await db.query<{ k: string }>(
    `SELECT encode(trace_id, 'hex') || '/' || encode(span_id, 'hex') AS k FROM tapedeck_store.spans`,
  );
  const [logs] = await db.query<{ n: bigint }>('SELECT count(*) AS n FROM tapedeck_store.logs');
  const runs = await db.query<{ run_id: string }>('SELECT DISTINCT run_id FROM tapedeck_store.spans ORDER BY run_id');
  return { spans: spans.map((r) => r.k), logs: Number(logs.n), runs: runs.map((r) => r.run_id) };
}

describe.skipIf(!databaseKinds.includes('postgres'))('three tapedeck instances on one database and one bucket', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  let s3: TestS3Server;
  let db: Database;
  let instances: ServedTapedeck[];
  let single: TestTapedeck;
  afterAll(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  beforeAll(async () => {
    s3 = await startS3Server();
    cleanups.push(() => s3.close());
    const server = await createServerDatabase();
    cleanups.push(server.drop);
    db = createPgDatabase(server.url);
    cleanups.push(() => db.close());
    instances = [];
    for (let i = 0; i < INSTANCES; i++) {
      const dataDir = mkdtempSync(path.join(os.tmpdir(), `tapedeck-scale-${i}-`));
      cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
      const served = new ServedTapedeck({
        dataDir,
        databaseUrl: server.url,
        httpPort: await freePort(),
        grpcPort: await freePort(),
        env: s3.env('replicas'),
      });
      cleanups.push(() => served.kill());
      instances.push(served);
    }
    // Started together: they take turns on the migrations.
    await Promise.all(instances.map((s) => s.start()));
    // The same input, one instance, its own database, payloads in memory.
    single = await startTestTapedeck('postgres');
    cleanups.push(() => single.close());
  }, START_TIMEOUT_MS * 2);

  it('stores every span exactly once through redeliveries and a killed instance, with tapes as one instance stores them', async () => {
    const exports = [...corpusExports(), ...generatedExports()].sort((a, b) => a.name.localeCompare(b.name));
    const targets = instances.map((s) => ({ url: s.url, grpcAddress: s.grpcUrl.replace('http://', '') }));
    const alive = (i: number) => instances[i].alive;
    // The single instance takes the same exports in the same order, once each.
    const singleTarget = { url: single.url, grpcAddress: single.grpcAddress };
    for (const e of exports) expect(await send(singleTarget, e), e.name).toBe(true);

    /** Sends to instance `first` or, failing that, each next live one in turn; returns who took it. */
    const deliver = async (e: Export, first: number): Promise<number> => {
      for (let attempt = 0; attempt < 50; attempt++) {
        const i = (first + attempt) % INSTANCES;
        if (alive(i) && (await send(targets[i], e))) return i;
        if (attempt % INSTANCES === INSTANCES - 1) await sleep(200);
      }
      throw new Error(`no instance took ${e.name}`);
    };
    const killAt = Math.floor(exports.length / 3);
    const victim = 1;
    let redeliveredElsewhere = 0;
    // Two senders, each taking every other export, round-robin over the instances.
    await Promise.all(
      [0, 1].map(async (sender) => {
        for (let n = sender; n < exports.length; n += 2) {
          if (n === killAt) void instances[victim].kill();
          const took = await deliver(exports[n], n % INSTANCES);
          // the redelivery: the same export again, to a different instance
          const again = await deliver(exports[n], took + 1);
          if (again !== took) redeliveredElsewhere++;
        }
      }),
    );
    expect(instances[victim].kills).toBe(1);
    expect(redeliveredElsewhere).toBe(exports.length);

    // every span sent, exactly once
    const stored = await readStore(db);
    const expected = await readStore(single.db);
    expect(stored.spans.length).toBe(new Set(stored.spans).size);
    expect(new Set(stored.spans)).toEqual(new Set(expected.spans));
    expect(stored.spans.length).toBeGreaterThanOrEqual(GENERATED_BATCHES * SPANS_PER_BATCH);
    expect(stored.logs).toBe(expected.logs);
    expect(stored.logs).toBeGreaterThan(0);

    // every tape as the single instance's, read through a surviving instance
    expect(stored.runs).toEqual(expected.runs);
    const reader = instances.find((s) => s.alive)!;
    for (const run of expected.runs) {
      const [mine, theirs] = await Promise.all(
        [reader.url, single.url].map(async (url) => {
          const response = await fetch(`${url}/v1/tapes/${encodeURIComponent(run)}`);
          expect(response.status, run).toBe(200);
          return response.json();
        }),
      );
      expect(mine, run).toEqual(theirs);
    }

    // payloads over the threshold, in the bucket under the instances' prefix, and nowhere else
    const keys = await s3.keys();
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).toMatch(/^replicas\/sha256\/[0-9a-f]{64}$/);
    const [held] = await db.query<{ n: bigint }>('SELECT count(*) AS n FROM tapedeck_store.payloads');
    expect(held.n).toBe(0n);
  }, 180_000); // three processes and a sender on a shared 2-core machine

  it('serves a replay created on one instance through the other two, as its owner serves it', async () => {
    const victim = instances.findIndex((s) => !s.alive);
    if (victim >= 0) await instances[victim].start(START_TIMEOUT_MS);
    const [a, b, c] = instances;
    const sdk = { maxRetries: 0, apiKey: 'any' };

    // OpenAI, created on a, driven through b and c: a plain call, both tool steps, a streamed call
    const openaiRun = groundTruth('openllmetry-openai/multi-tool');
    const created = await createReplay(a, openaiRun.session_id);
    expect(created.llm_steps).toBe(2);
    const through = (instance: ServedTapedeck) =>
      new OpenAI({ ...sdk, baseURL: `${instance.url}${created.base_urls.openai}` });
    const [first, second] = modelCalls(openaiRun);
    expect(await openAiCall(through(b), first.request, false)).toEqual(recordedOpenAi(first.response));
    const tools = [await nextTool(c, created.id), await nextTool(b, created.id)];
    expect(tools.map((t) => [t.tool, t.result])).toEqual(toolCalls(openaiRun).map((t) => [t.name, t.result]));
    expect(await openAiCall(through(c), second.request, true)).toEqual(recordedOpenAi(second.response));
    // past the last step, through either: 410, which the SDK does not retry
    const exhausted = await openAiCall(through(b), second.request, false).catch((error: unknown) => error);
    expect(exhausted).toBeInstanceOf(OpenAIAPIError);
    expect((exhausted as OpenAIAPIError).status).toBe(410);
    // one status, whoever is asked
    const statuses = await Promise.all(instances.map((s) => getJson(`${s.url}/v1/replays/${created.id}`)));
    for (const { status, body } of statuses) {
      expect(status).toBe(200);
      expect(body).toMatchObject({ served: 2, remaining: 0, diverged: null, exhausted_calls: 1 });
      expect(body.calls.map((call: Any) => call.matched)).toEqual([true, true]);
    }

    // Anthropic, created on b, driven through c and a, streamed
    const anthropicRun = groundTruth('openllmetry-anthropic/multi-tool');
    const other = await createReplay(b, anthropicRun.session_id);
    const calls = modelCalls(anthropicRun);
    for (const [i, instance] of [c, a].entries()) {
      const client = new Anthropic({ ...sdk, baseURL: `${instance.url}${other.base_urls.anthropic}` });
      expect(await anthropicCall(client, calls[i].request, true)).toEqual(
        contentOf((calls[i].response as Any).content),
      );
    }
    expect((await getJson(`${c.url}/v1/replays/${other.id}`)).body).toMatchObject({ served: 2, remaining: 0 });

    // an erasure posted to a withdraws the replay c holds, read through b
    const erasedRun = groundTruth('openinference-anthropic/weather');
    const doomed = await createReplay(c, erasedRun.session_id);
    const erasure = await fetch(`${a.url}/v1/erasures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run: erasedRun.session_id }),
    });
    expect(erasure.status).toBe(202);
    const withdrawn = await getJson(`${b.url}/v1/replays/${doomed.id}`);
    expect(withdrawn.status).toBe(410);
    expect(withdrawn.body.error).toMatchObject({ type: 'replay_erased', erasure: ((await erasure.json()) as Any).id });
    const anthropic = new Anthropic({ ...sdk, baseURL: `${a.url}${doomed.base_urls.anthropic}` });
    const refused = await anthropicCall(anthropic, modelCalls(erasedRun)[0].request, false).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(AnthropicAPIError);
    expect((refused as AnthropicAPIError).status).toBe(410);

    // the instance holding a replay killed: elsewhere its calls are unavailable, retryable
    await c.kill();
    const gone = await fetch(`${a.url}/v1/replays/${doomed.id}`);
    expect(gone.status).toBe(503);
    expect(gone.headers.get('retry-after')).not.toBeNull();
    expect(((await gone.json()) as Any).error.type).toBe('unavailable');
    // stopped gracefully: its replays end with it, and elsewhere they are simply gone
    await b.stop();
    expect((await getJson(`${a.url}/v1/replays/${other.id}`)).status).toBe(404);
  }, 120_000);
});
