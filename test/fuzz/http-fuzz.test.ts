/**
 * About 3,000 generated and mutated requests against `tapedeck serve` (the built CLI, a
 * child process): OTLP/HTTP trace and log bodies in protobuf and JSON (valid ones, with NUL,
 * lone surrogates, odd ids and times and GenAI attributes holding arbitrary text, and byte-
 * or text-level mutations of them), gzip framing (truncated, concatenated, bogus, other
 * encodings), replay bodies (POST /v1/replays and the OpenAI and Anthropic model-call routes
 * of a live replay), recall queries and diff parameters. Every answer must be 2xx or 4xx, an
 * error carries a body that says what is wrong (JSON, or a google.rpc.Status in protobuf for
 * a protobuf OTLP request, as OTLP/HTTP prescribes), no request may hang, and afterwards the
 * process is alive, answers /healthz and its resident memory stayed within a generous bound.
 *
 * The seed is fixed so that a run is reproducible; TAPEDECK_FUZZ_SEED picks another. Each
 * breach is listed with its case number and the error the server logged.
 *
 * Runs on PostgreSQL when TAPEDECK_TEST_DATABASE_URL is set, else on embedded PGlite.
 */
import { gzipSync } from 'node:zlib';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpTypes } from '../../src/otlp/proto.js';
import { createServerDatabase, databaseKinds } from '../helpers/databases.js';
import { freePort, ServedTapedeck } from '../faults/support/served-tapedeck.js';

const SEED = Number(process.env.TAPEDECK_FUZZ_SEED ?? 20_261_203);
const kind = databaseKinds.includes('postgres') ? 'postgres' : 'pglite';
const MiB = 1024 * 1024;
/** a request answered later than this counts as a hang */
const ANSWER_WITHIN_MS = 15_000;
/** resident memory may grow by at most this much over the whole suite */
const RSS_GROWTH_BOUND = 256 * MiB;

// ---------------------------------------------------------------------------------------
// The client

interface Answer {
  status: number;
  contentType: string;
  body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let served: ServedTapedeck;

function send(
  method: string,
  target: string,
  body?: Uint8Array,
  headers: Record<string, string> = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${served.url}${target}`,
      {
        method,
        agent,
        headers: body ? { 'content-length': String(body.byteLength), ...headers } : headers,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers['content-type'] ?? ''),
            body: Buffer.concat(chunks),
          }),
        );
        res.on('error', reject);
      },
    );
    req.setTimeout(ANSWER_WITHIN_MS, () => req.destroy(new Error(`no answer within ${ANSWER_WITHIN_MS} ms: a hang`)));
    req.on('error', reject);
    req.end(body ? Buffer.from(body.buffer, body.byteOffset, body.byteLength) : undefined);
  });
}

/** The contract every answer keeps; returns a description of the breach, or nothing. */
function breach(answer: Answer): string | undefined {
  if (answer.status >= 200 && answer.status < 300) return undefined;
  if (answer.status < 400 || answer.status >= 500) return `answered ${answer.status}: ${answer.body.toString()}`;
  if (answer.contentType.startsWith('application/json')) {
    let parsed: { error?: { message?: unknown; type?: unknown }; message?: unknown };
    try {
      parsed = JSON.parse(answer.body.toString('utf8'));
    } catch {
      return `${answer.status} with a body that is not JSON: ${answer.body.toString().slice(0, 200)}`;
    }
    const message = parsed.error?.message ?? parsed.message;
    if (typeof message !== 'string' || message === '')
      return `${answer.status} with a JSON body naming no error: ${answer.body.toString().slice(0, 200)}`;
    return undefined;
  }
  if (answer.contentType.startsWith('application/x-protobuf')) {
    const { Status } = otlpTypes();
    try {
      const status = Status.toObject(Status.decode(answer.body)) as { message?: string };
      if (!status.message) return `${answer.status} with a google.rpc.Status naming no error`;
      return undefined;
    } catch {
      return `${answer.status} with a protobuf body that is not a google.rpc.Status`;
    }
  }
  return `${answer.status} with content-type ${JSON.stringify(answer.contentType)}: ${answer.body.toString().slice(0, 200)}`;
}

const statuses = new Map<number, number>();
let cases = 0;
/** every breach of the contract, with the case that caused it and what the server logged */
let breaches: string[] = [];

/** The last error the server logged (pino's err.message), to say why it answered 5xx. */
function lastLoggedError(): string {
  const messages = [...served.stderr().matchAll(/"err":\{"type":"[^"]*","message":"((?:[^"\\]|\\.){0,300})/g)];
  return messages.at(-1)?.[1] ?? '(nothing logged)';
}

async function expectContract(answer: Promise<Answer>, what: () => string): Promise<void> {
  const a = await answer;
  cases++;
  statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
  const problem = breach(a);
  if (problem) {
    const logged = a.status >= 500 ? `; server log: ${lastLoggedError()}` : '';
    breaches.push(`case ${cases}: ${what().slice(0, 300)}: ${problem.slice(0, 300)}${logged}`);
  }
}

/** Asserts that the cases run so far kept the contract, naming the first breaches. */
function expectNoBreaches(): void {
  const found = breaches;
  breaches = [];
  expect(found.slice(0, 8), `${found.length} breaches (seed ${SEED})`).toEqual([]);
}

const runProperty = async <T>(arbitrary: fc.Arbitrary<T>, numRuns: number, check: (value: T) => Promise<void>) => {
  await fc.assert(fc.asyncProperty(arbitrary, check), { seed: SEED, numRuns, endOnFailure: true });
};

// ---------------------------------------------------------------------------------------
// Generators

/** Text with what databases and parsers choke on: NUL, lone surrogates, JSON-looking bits. */
const nastyText = fc.oneof(
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      '\u0000',
      'a\u0000b',
      '\ud800',
      'x\udfffy',
      '\\u0000',
      '{"role":"user"',
      '[{"role":"user","content":"\u0000"}]',
      '[]',
      'null',
      '{}',
      '💥'.repeat(20),
      ' '.repeat(300),
    ),
  },
  { weight: 1, arbitrary: fc.json({ maxDepth: 3 }) },
);

const genAiKeys = [
  'gen_ai.operation.name',
  'gen_ai.provider.name',
  'gen_ai.system',
  'gen_ai.request.model',
  'gen_ai.response.model',
  'gen_ai.input.messages',
  'gen_ai.output.messages',
  'gen_ai.system_instructions',
  'gen_ai.conversation.id',
  'gen_ai.usage.input_tokens',
  'gen_ai.tool.name',
  'gen_ai.tool.call.arguments',
  'gen_ai.tool.call.result',
  'llm.input_messages.0.message.role',
  'llm.input_messages.0.message.content',
  'llm.output_messages.0.message.content',
  'openinference.span.kind',
  'input.value',
  'output.value',
  'traceloop.entity.input',
  'traceloop.entity.output',
  'gen_ai.prompt.0.content',
  'gen_ai.completion.0.content',
  'session.id',
];

const anyValue: fc.Arbitrary<Record<string, unknown>> = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.record({ stringValue: nastyText }),
    fc.record({ intValue: fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n }).map(String) }),
    fc.record({ doubleValue: fc.double() }),
    fc.record({ boolValue: fc.boolean() }),
    fc.record({ bytesValue: fc.uint8Array({ maxLength: 20 }) }),
    fc.record({ arrayValue: fc.record({ values: fc.array(tie('value'), { maxLength: 3 }) }) }),
    fc.record({
      kvlistValue: fc.record({
        values: fc.array(fc.record({ key: nastyText, value: tie('value') }), { maxLength: 3 }),
      }),
    }),
  ),
})).value as fc.Arbitrary<Record<string, unknown>>;

const attribute = fc.record({
  key: fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...genAiKeys) }, { weight: 1, arbitrary: nastyText }),
  value: fc.oneof(
    { weight: 3, arbitrary: fc.record({ stringValue: nastyText }) },
    { weight: 1, arbitrary: fc.constantFrom({ stringValue: 'chat' }, { stringValue: 'execute_tool' }) },
    { weight: 2, arbitrary: anyValue },
  ),
});
const attributes = fc.array(attribute, { maxLength: 8 });

const idBytes = (usual: number) =>
  fc.oneof(
    { weight: 6, arbitrary: fc.uint8Array({ minLength: usual, maxLength: usual }) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: usual * 2 }) },
    { weight: 1, arbitrary: fc.constant(new Uint8Array(usual)) },
  );
const nanos = fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }).map(String);

const span = fc.record(
  {
    traceId: idBytes(16),
    spanId: idBytes(8),
    parentSpanId: idBytes(8),
    traceState: nastyText,
    name: nastyText,
    kind: fc.integer({ min: 0, max: 7 }),
    startTimeUnixNano: nanos,
    endTimeUnixNano: nanos,
    attributes,
    events: fc.array(fc.record({ timeUnixNano: nanos, name: nastyText, attributes }), { maxLength: 2 }),
    links: fc.array(fc.record({ traceId: idBytes(16), spanId: idBytes(8), attributes }), { maxLength: 2 }),
    status: fc.record({ code: fc.integer({ min: 0, max: 3 }), message: nastyText }),
  },
  { requiredKeys: ['traceId', 'spanId', 'name'] },
);

const traceRequest = fc.record({
  resourceSpans: fc.array(
    fc.record({
      resource: fc.record({ attributes }),
      scopeSpans: fc.array(
        fc.record({
          scope: fc.record({ name: nastyText, version: nastyText }),
          spans: fc.array(span, { maxLength: 4 }),
        }),
        { maxLength: 2 },
      ),
    }),
    { maxLength: 2 },
  ),
});

const logRequest = fc.record({
  resourceLogs: fc.array(
    fc.record({
      resource: fc.record({ attributes }),
      scopeLogs: fc.array(
        fc.record({
          scope: fc.record({ name: nastyText }),
          logRecords: fc.array(
            fc.record(
              {
                timeUnixNano: nanos,
                observedTimeUnixNano: nanos,
                severityNumber: fc.integer({ min: 0, max: 30 }),
                severityText: nastyText,
                eventName: nastyText,
                body: anyValue,
                attributes,
                traceId: idBytes(16),
                spanId: idBytes(8),
              },
              { requiredKeys: [] },
            ),
            { maxLength: 4 },
          ),
        }),
        { maxLength: 2 },
      ),
    }),
    { maxLength: 2 },
  ),
});

const encodeTraces = (request: unknown): Uint8Array => {
  const { ExportTraceServiceRequest: R } = otlpTypes();
  return R.encode(R.fromObject(request as Record<string, unknown>)).finish();
};
const encodeLogs = (request: unknown): Uint8Array => {
  const { ExportLogsServiceRequest: R } = otlpTypes();
  return R.encode(R.fromObject(request as Record<string, unknown>)).finish();
};

/** The OTLP/JSON mapping of a generated request: ids in hex (or not, sometimes), bytes in base64. */
function toOtlpJson(value: unknown, idsAsHex: boolean): unknown {
  if (value instanceof Uint8Array) return Buffer.from(value).toString(idsAsHex ? 'hex' : 'base64');
  if (Array.isArray(value)) return value.map((v) => toOtlpJson(v, idsAsHex));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      out[k] = k === 'bytesValue' ? Buffer.from(v as Uint8Array).toString('base64') : toOtlpJson(v, idsAsHex);
    }
    return out;
  }
  return value;
}

/** Byte-level damage: truncation, flipped bytes, inserted bytes, appended garbage. */
const mutation = fc.record({
  cut: fc.option(fc.double({ min: 0, max: 1, noNaN: true }), { nil: undefined }),
  flips: fc.array(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.integer({ min: 0, max: 255 })), {
    maxLength: 4,
  }),
  insert: fc.option(fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.uint8Array({ maxLength: 16 })), {
    nil: undefined,
  }),
  append: fc.uint8Array({ maxLength: 8 }),
});
type Mutation = typeof mutation extends fc.Arbitrary<infer T> ? T : never;

function mutate(bytes: Uint8Array, m: Mutation): Uint8Array {
  let out = Buffer.from(bytes);
  if (m.cut !== undefined) out = out.subarray(0, Math.floor(out.length * m.cut));
  for (const [at, value] of m.flips) if (out.length > 0) out[Math.floor(at * (out.length - 1))] = value;
  if (m.insert) {
    const at = Math.floor(m.insert[0] * out.length);
    out = Buffer.concat([out.subarray(0, at), Buffer.from(m.insert[1]), out.subarray(at)]);
  }
  return Buffer.concat([out, Buffer.from(m.append)]);
}

const PROTOBUF = 'application/x-protobuf';
const JSON_TYPE = 'application/json';

// ---------------------------------------------------------------------------------------
// The suite

describe(`fuzzing tapedeck serve's HTTP routes (${kind}, seed ${SEED})`, () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  let rssBefore = 0;
  let runIds: string[] = [];
  let replayId = '';

  beforeAll(async () => {
    console.log(`fuzz: seed ${SEED} (set TAPEDECK_FUZZ_SEED to use another), database ${kind}`);
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-fuzz-'));
    cleanups.push(async () => rmSync(dataDir, { recursive: true, force: true }));
    let databaseUrl: string | null = null;
    if (kind === 'postgres') {
      const server = await createServerDatabase();
      cleanups.push(server.drop);
      databaseUrl = server.url;
    }
    served = new ServedTapedeck({ dataDir, databaseUrl, httpPort: await freePort(), grpcPort: await freePort() });
    cleanups.push(() => served.kill());
    await served.start();
    // Runs to diff, recall and replay: three conversations of two chat calls each.
    const spans = [];
    for (let r = 0; r < 3; r++) {
      for (let c = 0; c < 2; c++) {
        spans.push({
          traceId: Buffer.from(`f022${r}`.padEnd(32, '0'), 'hex'),
          spanId: Buffer.from(`f022${r}${c}`.padEnd(16, '0'), 'hex'),
          name: 'chat gpt-4o-mini',
          kind: 3,
          startTimeUnixNano: String(1_800_000_000_000_000_000n + BigInt(r * 10 + c) * 1_000_000n),
          endTimeUnixNano: String(1_800_000_000_000_000_000n + BigInt(r * 10 + c) * 1_000_000n + 500_000n),
          attributes: [
            ['gen_ai.operation.name', 'chat'],
            ['gen_ai.provider.name', 'openai'],
            ['gen_ai.request.model', 'gpt-4o-mini'],
            ['gen_ai.conversation.id', `fuzz-run-${r}`],
            [
              'gen_ai.input.messages',
              JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `weather in city ${r}, turn ${c}` }] }]),
            ],
            [
              'gen_ai.output.messages',
              JSON.stringify([
                { role: 'assistant', parts: [{ type: 'text', content: `sunny, ${r}${c}` }], finish_reason: 'stop' },
              ]),
            ],
          ].map(([key, value]) => ({ key, value: { stringValue: value } })),
        });
      }
    }
    const seeded = await send(
      'POST',
      '/v1/traces',
      encodeTraces({ resourceSpans: [{ resource: {}, scopeSpans: [{ scope: { name: 'fuzz' }, spans }] }] }),
      { 'content-type': PROTOBUF },
    );
    expect(seeded.status).toBe(200);
    const runs = JSON.parse((await send('GET', '/v1/runs?limit=10')).body.toString()) as { runs: { run: string }[] };
    runIds = runs.runs.map((r) => r.run);
    expect(runIds.length).toBeGreaterThan(0);
    const replay = await send('POST', '/v1/replays', Buffer.from(JSON.stringify({ run: runIds[0], mode: 'loose' })), {
      'content-type': JSON_TYPE,
    });
    expect(replay.status, replay.body.toString()).toBe(201);
    replayId = (JSON.parse(replay.body.toString()) as { id: string }).id;
    rssBefore = served.rss();
  }, 180_000);

  afterAll(async () => {
    agent.destroy();
    const histogram = [...statuses.entries()]
      .sort(([a], [b]) => a - b)
      .map(([s, n]) => `${s}: ${n}`)
      .join(', ');
    console.log(`fuzz: ${cases} cases (seed ${SEED}); answers ${histogram}`);
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => {});
  });

  it('OTLP protobuf trace and log bodies, valid and mutated', async () => {
    await runProperty(fc.tuple(traceRequest, fc.option(mutation, { freq: 2, nil: undefined })), 400, async ([r, m]) => {
      const bytes = m ? mutate(encodeTraces(r), m) : encodeTraces(r);
      await expectContract(send('POST', '/v1/traces', bytes, { 'content-type': PROTOBUF }), () => 'protobuf traces');
    });
    await runProperty(fc.tuple(logRequest, fc.option(mutation, { freq: 2, nil: undefined })), 200, async ([r, m]) => {
      const bytes = m ? mutate(encodeLogs(r), m) : encodeLogs(r);
      await expectContract(send('POST', '/v1/logs', bytes, { 'content-type': PROTOBUF }), () => 'protobuf logs');
    });
    expectNoBreaches();
  }, 120_000);

  it('OTLP JSON trace and log bodies, valid, mutated and arbitrary', async () => {
    const body = fc.oneof(
      {
        weight: 4,
        arbitrary: fc
          .tuple(traceRequest, fc.boolean())
          .map(([r, hex]) => Buffer.from(JSON.stringify(toOtlpJson(r, hex)))),
      },
      {
        weight: 2,
        arbitrary: fc
          .tuple(traceRequest, mutation)
          .map(([r, m]) => Buffer.from(mutate(Buffer.from(JSON.stringify(toOtlpJson(r, true))), m))),
      },
      { weight: 1, arbitrary: fc.json({ maxDepth: 4 }).map((t) => Buffer.from(t)) },
      {
        weight: 1,
        arbitrary: fc
          .record({ resourceSpans: fc.anything({ maxDepth: 3 }) })
          .map((v) => Buffer.from(JSON.stringify(v))),
      },
    );
    await runProperty(body, 400, async (bytes) => {
      await expectContract(
        send('POST', '/v1/traces', bytes, { 'content-type': JSON_TYPE }),
        () => `JSON traces ${JSON.stringify(bytes.toString().slice(0, 200))}`,
      );
    });
    await runProperty(logRequest, 100, async (r) => {
      const text = JSON.stringify(toOtlpJson(r, true));
      await expectContract(
        send('POST', '/v1/logs', Buffer.from(text), { 'content-type': JSON_TYPE }),
        () => 'JSON logs',
      );
    });
    expectNoBreaches();
  }, 120_000);

  it('gzip framing and content encodings', async () => {
    const framing = fc.record({
      request: traceRequest,
      json: fc.boolean(),
      frame: fc.constantFrom(
        'gzip',
        'truncated',
        'concatenated',
        'bogus',
        'gzip-of-garbage',
        'double',
        'not-compressed',
      ),
      at: fc.double({ min: 0, max: 1, noNaN: true }),
      garbage: fc.uint8Array({ minLength: 1, maxLength: 64 }),
      encoding: fc.constantFrom(
        'gzip',
        'gzip',
        'gzip',
        'GZIP',
        'x-gzip',
        'deflate',
        'zstd',
        'br',
        'identity',
        'gzip, gzip',
        'compress',
        ' gzip',
      ),
    });
    await runProperty(framing, 400, async (f) => {
      const plain = f.json
        ? Buffer.from(JSON.stringify(toOtlpJson(f.request, true)))
        : Buffer.from(encodeTraces(f.request));
      const gz = gzipSync(plain);
      const body =
        f.frame === 'gzip'
          ? gz
          : f.frame === 'truncated'
            ? gz.subarray(0, Math.floor(gz.length * f.at))
            : f.frame === 'concatenated'
              ? Buffer.concat([gz, gzipSync(Buffer.from(f.garbage))])
              : f.frame === 'bogus'
                ? Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0x00]), Buffer.from(f.garbage)])
                : f.frame === 'gzip-of-garbage'
                  ? gzipSync(Buffer.from(f.garbage))
                  : f.frame === 'double'
                    ? gzipSync(gz)
                    : plain;
      await expectContract(
        send('POST', '/v1/traces', body, {
          'content-type': f.json ? JSON_TYPE : PROTOBUF,
          'content-encoding': f.encoding,
        }),
        () => `${f.frame} body with content-encoding ${JSON.stringify(f.encoding)}`,
      );
    });
    expectNoBreaches();
  }, 120_000);

  it('replay bodies: POST /v1/replays and the model-call routes', async () => {
    const createBody = fc.oneof(
      fc.record(
        {
          run: fc.oneof(fc.constantFrom(...runIds), nastyText, fc.anything({ maxDepth: 1 })),
          mode: fc.oneof(fc.constantFrom('strict', 'loose'), nastyText, fc.integer()),
          extra: fc.anything({ maxDepth: 2 }),
        },
        { requiredKeys: [] },
      ),
      fc.json({ maxDepth: 3 }).map((t) => JSON.parse(t) as unknown),
    );
    await runProperty(
      fc.tuple(
        createBody,
        fc.option(mutation, { freq: 4, nil: undefined }),
        fc.constantFrom(JSON_TYPE, 'text/plain', ''),
      ),
      350,
      async ([value, m, type]) => {
        const text = Buffer.from(JSON.stringify(value, (_k, x) => (typeof x === 'bigint' ? String(x) : x)) ?? '');
        await expectContract(
          send('POST', '/v1/replays', m ? mutate(text, m) : text, type ? { 'content-type': type } : {}),
          () => `POST /v1/replays ${text.toString().slice(0, 200)}`,
        );
      },
    );

    const message = fc.record(
      {
        role: fc.oneof(fc.constantFrom('system', 'user', 'assistant', 'tool', 'developer'), nastyText),
        content: fc.oneof(
          nastyText,
          fc.array(fc.record({ type: fc.constantFrom('text', 'image_url', 'tool_result', 'x'), text: nastyText }), {
            maxLength: 3,
          }),
          fc.anything({ maxDepth: 2 }),
        ),
        tool_calls: fc.anything({ maxDepth: 2 }),
        tool_call_id: nastyText,
      },
      { requiredKeys: ['role'] },
    );
    const callBody = fc.record(
      {
        model: fc.oneof(fc.constant('gpt-4o-mini'), nastyText),
        messages: fc.oneof(fc.array(message, { maxLength: 4 }), fc.anything({ maxDepth: 2 })),
        system: fc.oneof(nastyText, fc.anything({ maxDepth: 2 })),
        max_tokens: fc.oneof(fc.integer(), nastyText),
        stream: fc.boolean(),
        tools: fc.anything({ maxDepth: 2 }),
      },
      { requiredKeys: [] },
    );
    const route = fc.constantFrom('openai/v1/chat/completions', 'anthropic/v1/messages', 'tools/next');
    const id = fc.oneof(
      { weight: 4, arbitrary: fc.constant(() => replayId) },
      {
        weight: 1,
        arbitrary: fc
          .string({ unit: fc.constantFrom(...'0123456789abcdefg'), maxLength: 40 })
          .map((h) => () => `rp_${h}`),
      },
    );
    await runProperty(
      fc.tuple(callBody, route, id, fc.option(mutation, { freq: 4, nil: undefined })),
      450,
      async ([value, r, idOf, m]) => {
        const text = Buffer.from(JSON.stringify(value, (_k, x) => (typeof x === 'bigint' ? String(x) : x)));
        const target = `/v1/replays/${encodeURIComponent(idOf())}/${r}`;
        await expectContract(
          send('POST', target, m ? mutate(text, m) : text, { 'content-type': JSON_TYPE }),
          () => `POST ${target} ${text.toString().slice(0, 200)}`,
        );
      },
    );
    expectNoBreaches();
  }, 120_000);

  it('recall queries and diff parameters', async () => {
    const param = fc.oneof(
      { weight: 3, arbitrary: nastyText.map((s) => encodeURIComponent(s.replace(/[\ud800-\udfff]/g, '?'))) },
      { weight: 1, arbitrary: fc.constantFrom('%', '%zz', '%00', '%ff%fe', '%ud800', '+', '&&', '=', '%E2%82') },
      { weight: 1, arbitrary: fc.string({ minLength: 900, maxLength: 1_200 }).map(encodeURIComponent) },
      { weight: 2, arbitrary: fc.constantFrom('weather', 'city', 'sunny', 'weather city turn', 'zzz') },
    );
    const recall = fc.record(
      {
        q: param,
        outcome: fc.oneof(fc.constantFrom('success', 'failure', 'any'), param),
        limit: fc.oneof(fc.integer({ min: -5, max: 200 }).map(String), param),
      },
      { requiredKeys: [] },
    );
    await runProperty(recall, 400, async (p) => {
      const query = Object.entries(p)
        .map(([k, v]) => `${k}=${v}`)
        .join('&');
      await expectContract(send('GET', `/v1/recall?${query}`), () => `GET /v1/recall?${query}`);
    });
    const run = fc.oneof(
      { weight: 2, arbitrary: fc.constantFrom(...runIds).map(encodeURIComponent) },
      { weight: 3, arbitrary: param },
    );
    const diff = fc.record({ a: run, b: run, extra: param }, { requiredKeys: [] });
    await runProperty(diff, 350, async (p) => {
      const query = Object.entries(p)
        .map(([k, v]) => `${k}=${v}`)
        .join('&');
      await expectContract(send('GET', `/v1/diff?${query}`), () => `GET /v1/diff?${query}`);
    });
    expectNoBreaches();
  }, 120_000);

  it('leaves the process alive, answering, its memory bounded', async () => {
    expect(served.alive, served.stderr()).toBe(true);
    expect((await send('GET', '/healthz')).status).toBe(200);
    const rssAfter = served.rss();
    console.log(
      `fuzz: resident memory ${Math.round(rssBefore / MiB)} MiB before, ${Math.round(rssAfter / MiB)} MiB after ${cases} cases`,
    );
    expect(rssAfter - rssBefore).toBeLessThan(RSS_GROWTH_BOUND);
    expect(cases).toBeGreaterThanOrEqual(3_000);
  });
});
