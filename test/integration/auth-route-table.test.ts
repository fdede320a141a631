/**
 * Every route's auth decision, generated from the route table itself: the routes of the
 * application `tapedeck serve` runs (RunningTapedeck.app.routes) and both gRPC services
 * (GRPC_SERVICES), on PGlite and PostgreSQL. For each route:
 * - without a credential: 401 (probes excepted);
 * - with a read-only credential, every route that needs more: 403;
 * - with a credential bound to another tenant, the run, replay or credential the route names
 *   is 404, and a list never shows it; the same request with the owning tenant's credential is
 *   not 404, so the 404 is tenancy and not a broken request;
 * - a tenant whose own spans name another tenant's payload by its digest reads, through every
 *   route, its own content as recorded and never that payload.
 * A route added without a guard (auth/route-auth.ts) has no decision and fails the first test.
 *
 * Then the official OpenAI and Anthropic SDKs replay a run with a read-only token as their
 * API key, and another tenant's token gets 404.
 */
import Anthropic from '@anthropic-ai/sdk';
import * as grpc from '@grpc/grpc-js';
import { Hono } from 'hono';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AuthDecision, decisionOf } from '../../src/auth/route-auth.js';
import { readArchiveBytes } from '../../src/cassettes/archive.js';
import { defaultCassetteLimits } from '../../src/cassettes/format.js';
import { checkCassette } from '../../src/cassettes/load.js';
import { GRPC_SERVICES } from '../../src/ingest/grpc-receiver.js';
import { appWith } from '../helpers/app.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  randomSpanId,
  randomTraceId,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
  traceBody,
} from '../helpers/tapedeck-server.js';

const SECRET = {
  ops: 'ops-secret-000000000000',
  acmeRw: 'acme-rw-secret-0000000000',
  acmeRo: 'acme-ro-secret-0000000000',
  globexRw: 'globex-rw-secret-00000000',
  globexRo: 'globex-ro-secret-00000000',
};
const TOKENS = [
  `ops:${SECRET.ops}:admin`,
  `acme-rw:${SECRET.acmeRw}:rw:acme`,
  `acme-ro:${SECRET.acmeRo}:ro:acme`,
  `globex-rw:${SECRET.globexRw}:rw:globex`,
  `globex-ro:${SECRET.globexRo}:ro:globex`,
].join(',');

const RUN = 'run-globex';
const QUESTION = 'What is the capital of Peru?';
const ANSWER = 'Lima is the capital of Peru.';
/** globex's answer in its vault run: over the payload threshold, so offloaded */
const VAULT = 'The vault combination is 31-7-42. ';
const PROBE = 'run-acme-probe';
const PAYLOAD_THRESHOLD_BYTES = 1024;

/** One recorded model call of tenant globex's run, as OTel GenAI attributes. */
function modelCallSpans(run: string, question: unknown = QUESTION, answer: unknown = ANSWER) {
  return [
    {
      traceId: randomTraceId(),
      spanId: randomSpanId(),
      name: 'chat gpt-4o-mini',
      attributes: {
        'session.id': run,
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', content: question }]),
        'gen_ai.output.messages': JSON.stringify([{ role: 'assistant', content: answer, finish_reason: 'stop' }]),
      },
    },
  ];
}

interface Endpoint {
  method: string;
  path: string;
  decision: AuthDecision | undefined;
}

/** The application's endpoints (every handler that is not a guard or a '*' middleware) and their decisions. */
function endpointsOf(app: Hono): Endpoint[] {
  const decisions = new Map<string, AuthDecision>();
  const endpoints = new Map<string, Endpoint>();
  for (const r of app.routes) {
    const key = `${r.method} ${r.path}`;
    const decision = decisionOf(r.handler);
    if (decision) decisions.set(key, decision);
    else if (r.path !== '/*' && r.path !== '*')
      endpoints.set(key, { method: r.method, path: r.path, decision: undefined });
  }
  return [...endpoints.entries()].map(([key, e]) => ({ ...e, decision: decisions.get(key) }));
}

it('finds a route that declares no auth decision', () => {
  const routes = new Hono();
  routes.get('/v1/newly-added', (c) => c.text('no guard'));
  expect(endpointsOf(appWith(routes)).find((e) => e.path === '/v1/newly-added')).toEqual({
    method: 'GET',
    path: '/v1/newly-added',
    decision: undefined,
  });
});

describe.each(databaseKinds)('the route table on %s', (kind) => {
  let t: TestTapedeck;
  let replayId: string;
  let credentialId: string;
  let erasureId: string;
  let endpoints: Endpoint[];
  /** globex's offloaded vault answer, as acme's spans name it */
  let vaultRef: { $payload: string };
  let probeReplayId: string;

  const auth = (secret: string | null): Record<string, string> => (secret ? { authorization: `Bearer ${secret}` } : {});

  beforeAll(async () => {
    t = await startTestTapedeck(kind, { tokens: TOKENS, mcp: true, payloadThresholdBytes: PAYLOAD_THRESHOLD_BYTES });
    const ingested = await fetch(`${t.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.globexRw) },
      body: traceBody(modelCallSpans(RUN), 'json'),
    });
    expect(ingested.status).toBe(200);
    const created = await fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.globexRo) },
      body: JSON.stringify({ run: RUN, mode: 'loose' }),
    });
    expect(created.status).toBe(201);
    replayId = ((await created.json()) as { id: string }).id;
    const minted = await fetch(`${t.url}/v1/credentials`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.ops) },
      body: JSON.stringify({ name: 'globex-ci', role: 'rw', tenant: 'globex' }),
    });
    expect(minted.status).toBe(201);
    credentialId = ((await minted.json()) as { credential: { id: string } }).credential.id;
    const doomed = await fetch(`${t.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.globexRw) },
      body: traceBody(modelCallSpans('run-globex-erased'), 'json'),
    });
    expect(doomed.status).toBe(200);
    const erased = await fetch(`${t.url}/v1/erasures`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.globexRw) },
      body: JSON.stringify({ run: 'run-globex-erased' }),
    });
    expect(erased.status).toBe(202);
    erasureId = ((await erased.json()) as { id: string }).id;
    endpoints = endpointsOf(t.running.app);

    const vault = await fetch(`${t.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.globexRw) },
      body: traceBody(modelCallSpans('run-globex-vault', 'Open it.', VAULT.repeat(64)), 'json'),
    });
    expect(vault.status).toBe(200);
    const [row] = await t.db.query<{ ref: string }>(
      "SELECT tapedeck_store.payload_ref_of(response) AS ref FROM tapedeck_store.steps WHERE tenant = 'globex' AND tapedeck_store.payload_ref_of(response) IS NOT NULL",
    );
    vaultRef = { $payload: row.ref };
    const probe = await fetch(`${t.url}/v1/traces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.acmeRw) },
      body: traceBody(modelCallSpans(PROBE, vaultRef, vaultRef), 'json'),
    });
    expect(probe.status).toBe(200);
    const probeReplay = await fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.acmeRo) },
      body: JSON.stringify({ run: PROBE, mode: 'loose' }),
    });
    expect(probeReplay.status).toBe(201);
    probeReplayId = ((await probeReplay.json()) as { id: string }).id;
  }, START_TIMEOUT_MS);
  afterAll(async () => t?.close());

  /** What a request names; by default tenant globex's run, replay, credential and erasure. */
  interface Named {
    run: string;
    replay: string;
    bodies?: Record<string, unknown>;
    query?: Record<string, string>;
  }

  /** A concrete request for a route: its parameters name what `named` says. */
  function requestFor(
    e: Endpoint,
    secret: string | null,
    named: Named = { run: RUN, replay: replayId },
  ): { url: string; init: RequestInit } {
    const path = e.path
      .replace(':run', encodeURIComponent(named.run))
      .replace(
        ':id',
        e.path.startsWith('/v1/credentials')
          ? credentialId
          : e.path.startsWith('/v1/erasures')
            ? erasureId
            : named.replay,
      )
      .replace('*', 'embeddings');
    const query: Record<string, string> = {
      '/v1/diff': `?a=${named.run}&b=${named.run}`,
      '/v1/recall': '?q=capital+Peru',
      ...named.query,
    };
    const method = e.method === 'ALL' ? 'POST' : e.method;
    const bodies: Record<string, unknown> = {
      '/v1/replays': { run: named.run, mode: 'loose' },
      '/v1/credentials': { name: 'another', role: 'ro', tenant: 'globex' },
      '/v1/erasures': { run: named.run },
      '/v1/replays/:id': { paused: false },
      '/mcp': { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      '/v1/replays/:id/openai/v1/chat/completions': {
        model: 'gpt-4o-mini',
        messages: [{ role: 'user', content: QUESTION }],
      },
      '/v1/replays/:id/anthropic/v1/messages': {
        model: 'claude',
        max_tokens: 64,
        messages: [{ role: 'user', content: QUESTION }],
      },
      ...named.bodies,
    };
    const otlp = e.path === '/v1/traces' || e.path === '/v1/logs';
    const body =
      method === 'POST' || method === 'PATCH'
        ? otlp
          ? e.path === '/v1/traces'
            ? Buffer.from(traceBody(modelCallSpans('run-acme-sent'), 'json'))
            : '{"resourceLogs":[]}'
          : JSON.stringify(bodies[e.path] ?? {})
        : undefined;
    return {
      url: `${t.url}${path}${query[e.path] ?? ''}`,
      init: {
        method,
        headers: {
          ...(body ? { 'content-type': 'application/json' } : {}),
          ...(e.path === '/mcp' ? { accept: 'application/json, text/event-stream' } : {}),
          ...auth(secret),
        },
        body,
      },
    };
  }

  async function call(e: Endpoint, secret: string | null, named?: Named): Promise<{ status: number; text: string }> {
    const { url, init } = requestFor(e, secret, named);
    const res = await fetch(url, init);
    return { status: res.status, text: await res.text() };
  }

  it('gives every HTTP route an auth decision', () => {
    expect(endpoints.length).toBeGreaterThanOrEqual(16);
    expect(endpoints.filter((e) => e.decision === undefined).map((e) => `${e.method} ${e.path}`)).toEqual([]);
  });

  it('answers 401 without a credential on every route but the public ones', async () => {
    for (const e of endpoints) {
      const { status } = await call(e, null);
      // public routes answer without one (the console's file named here does not exist: 404)
      const expected = e.decision?.access !== 'public' ? 401 : e.path.endsWith('*') ? 404 : 200;
      expect([e.method, e.path, status]).toEqual([e.method, e.path, expected]);
      const wrong = await call(e, 'not-a-credential-of-this-server');
      if (e.decision?.access !== 'public') expect([e.path, wrong.status]).toEqual([e.path, 401]);
    }
  });

  it('answers 403 to a read-only credential on every route that writes or administers', async () => {
    const writing = endpoints.filter((e) => e.decision?.access === 'credential' && e.decision.role !== 'ro');
    expect(writing.map((e) => e.path)).toEqual(expect.arrayContaining(['/v1/traces', '/v1/logs', '/v1/credentials']));
    for (const e of writing) {
      expect([e.method, e.path, (await call(e, SECRET.acmeRo)).status]).toEqual([e.method, e.path, 403]);
      if (e.decision?.access === 'credential' && e.decision.role === 'admin')
        expect([e.method, e.path, (await call(e, SECRET.acmeRw)).status]).toEqual([e.method, e.path, 403]);
    }
  });

  it("answers 404 to another tenant's credential for every run, replay or credential a route names", async () => {
    const tenantRoutes = endpoints.filter(
      (e) => e.decision?.access === 'credential' && e.decision.role !== 'admin' && e.path.startsWith('/v1/'),
    );
    // an erasure names its run in its body; its owner's control would erase it (not done here)
    const erasing = (e: Endpoint) => e.method === 'POST' && e.path === '/v1/erasures';
    const naming = tenantRoutes.filter(
      (e) => erasing(e) || /:run|:id/.test(e.path) || e.path === '/v1/diff' || e.path === '/v1/replays',
    );
    expect(naming.length).toBeGreaterThanOrEqual(9);
    for (const e of naming) {
      const foreign = e.decision?.access === 'credential' && e.decision.role === 'rw' ? SECRET.acmeRw : SECRET.acmeRo;
      const { status, text } = await call(e, foreign);
      expect([e.method, e.path, status]).toEqual([e.method, e.path, 404]);
      expect(text).not.toContain(ANSWER);
    }
    // lists never show it
    for (const e of tenantRoutes.filter((r) => r.method === 'GET' && !naming.includes(r) && !erasing(r))) {
      const { status, text } = await call(e, SECRET.acmeRo);
      expect([e.path, status, text.includes(RUN) || text.includes(ANSWER)]).toEqual([e.path, 200, false]);
      const own = await call(e, SECRET.globexRo);
      expect([e.path, own.status, own.text.includes(RUN) || own.text.includes(QUESTION)]).toEqual([e.path, 200, true]);
    }
    // another tenant's erasure naming the run erased nothing of it
    const tape = await fetch(`${t.url}/v1/tapes/${RUN}`, { headers: auth(SECRET.globexRo) });
    expect([tape.status, (await tape.text()).includes(ANSWER)]).toEqual([200, true]);
    // the owner reaches each of them (the replay's answer may be used up: 410, not 404)
    for (const e of naming.filter((r) => !erasing(r))) {
      const { status } = await call(
        e,
        e.decision?.access === 'credential' && e.decision.role === 'rw' ? SECRET.globexRw : SECRET.globexRo,
      );
      expect([e.method, e.path, status === 404]).toEqual([e.method, e.path, false]);
    }
    // an admin's credential routes: a minted credential of globex is reached by the admin only
    const revoke = endpoints.find((e) => e.method === 'DELETE' && e.path === '/v1/credentials/:id');
    expect(revoke).toBeDefined();
    expect((await call(revoke!, SECRET.globexRw)).status).toBe(403);
    expect((await call(revoke!, SECRET.ops)).status).toBe(200);
    expect((await call(revoke!, SECRET.ops)).status).toBe(404);
  });

  it("never reads another tenant's payload that its own spans name by digest, through any route", async () => {
    const tenantRoutes = endpoints.filter(
      (e) => e.decision?.access === 'credential' && e.decision.role !== 'admin' && e.path !== '/v1/traces',
    );
    expect(tenantRoutes.length).toBeGreaterThanOrEqual(16);
    const named: Named = {
      run: PROBE,
      replay: probeReplayId,
      bodies: {
        '/v1/erasures': { payload: vaultRef.$payload },
        '/mcp': {
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: { name: 'get_run_tape', arguments: { run: PROBE, preview_chars: 4000 } },
        },
      },
      query: {
        '/v1/tapes/:run': '?resolve=true',
        '/v1/recall': '?q=vault+combination',
        '/v1/datasets/chat.jsonl': '?outcome=any',
      },
    };
    const seen: string[] = [];
    for (const e of tenantRoutes) {
      const secret = e.decision?.access === 'credential' && e.decision.role === 'rw' ? SECRET.acmeRw : SECRET.acmeRo;
      const { status, text } = await call(e, secret, named);
      expect([e.method, e.path, text.includes(VAULT)]).toEqual([e.method, e.path, false]);
      // naming the payload to erase it: acme's steps do not reference it, so there is none
      if (e.method === 'POST' && e.path === '/v1/erasures') expect(status).toBe(404);
      if (text.includes(vaultRef.$payload)) seen.push(`${e.method} ${e.path}`);
    }
    // the routes that show acme's content show the digest as the text it recorded
    expect(seen).toEqual(expect.arrayContaining(['GET /v1/tapes/:run', 'GET /v1/datasets/chat.jsonl', 'POST /mcp']));
    const cassette = endpoints.find((e) => e.path === '/v1/runs/:run/cassette');
    expect(cassette).toBeDefined();
    const exported = await fetch(requestFor(cassette!, SECRET.acmeRo, named).url, { headers: auth(SECRET.acmeRo) });
    const archive = await readArchiveBytes(Buffer.from(await exported.arrayBuffer()), {
      limits: defaultCassetteLimits,
    });
    expect([...checkCassette(archive, defaultCassetteLimits).blobs.keys()]).toEqual([]);
    // the payload is globex's still, and globex reads it
    const own = await fetch(`${t.url}/v1/tapes/run-globex-vault?resolve=true`, { headers: auth(SECRET.globexRo) });
    expect((await own.text()).includes(VAULT)).toBe(true);
  });

  it('holds both gRPC services to their decisions, and stores a tenant-bound credential into its tenant', async () => {
    expect(GRPC_SERVICES.map((s) => s.decision)).toEqual([
      { access: 'credential', role: 'rw', apiKey: false },
      { access: 'credential', role: 'rw', apiKey: false },
    ]);
    for (const service of GRPC_SERVICES) {
      const spans = modelCallSpans(`grpc-${service.signal}`);
      const body = service.signal === 'traces' ? traceBody(spans, 'protobuf') : new Uint8Array();
      expect(await grpcCall(t.grpcAddress, service.path, body, null)).toBe(grpc.status.UNAUTHENTICATED);
      expect(await grpcCall(t.grpcAddress, service.path, body, 'Bearer not-a-credential-of-this-server')).toBe(
        grpc.status.UNAUTHENTICATED,
      );
      expect(await grpcCall(t.grpcAddress, service.path, body, `Bearer ${SECRET.acmeRo}`)).toBe(
        grpc.status.PERMISSION_DENIED,
      );
      expect(await grpcCall(t.grpcAddress, service.path, body, `Bearer ${SECRET.acmeRw}`)).toBe(grpc.status.OK);
      if (service.signal === 'traces') {
        const rows = await t.db.query<{ tenant: string }>(
          "SELECT DISTINCT tenant FROM tapedeck_store.spans WHERE trace_id = decode($1, 'hex')",
          [spans[0].traceId],
        );
        expect(rows).toEqual([{ tenant: 'acme' }]);
      }
    }
  });

  it('replays through the official SDKs with a read-only token as API key; another tenant gets 404', async () => {
    const created = await fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...auth(SECRET.globexRo) },
      body: JSON.stringify({ run: RUN }),
    });
    const replay = (await created.json()) as { base_urls: { openai: string; anthropic: string } };
    expect(replay.base_urls.openai.startsWith('/v1/replays/')).toBe(true); // relative: never built from Host
    const openai = (apiKey: string) =>
      new OpenAI({ baseURL: `${t.url}${replay.base_urls.openai}`, apiKey, maxRetries: 0 });
    const anthropic = (apiKey: string) =>
      new Anthropic({ baseURL: `${t.url}${replay.base_urls.anthropic}`, apiKey, maxRetries: 0 });
    const ask = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: QUESTION }] };

    await expect(openai(SECRET.acmeRo).chat.completions.create(ask)).rejects.toMatchObject({ status: 404 });
    await expect(
      anthropic(SECRET.acmeRo).messages.create({ ...ask, model: 'claude', max_tokens: 64 }),
    ).rejects.toMatchObject({ status: 404 });
    const answered = await openai(SECRET.globexRo).chat.completions.create(ask);
    expect(answered.choices[0].message.content).toBe(ANSWER);

    // the Anthropic SDK sends x-api-key: accepted under /v1/replays, on a replay of its own
    const second = await fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': SECRET.globexRo },
      body: JSON.stringify({ run: RUN }),
    });
    expect(second.status).toBe(201);
    const { base_urls } = (await second.json()) as { base_urls: { anthropic: string } };
    const message = await new Anthropic({
      baseURL: `${t.url}${base_urls.anthropic}`,
      apiKey: SECRET.globexRo,
      maxRetries: 0,
    }).messages.create({
      ...ask,
      model: 'claude',
      max_tokens: 64,
    });
    expect(message.content).toMatchObject([{ type: 'text', text: ANSWER }]);
    // ...and nowhere else
    const elsewhere = await fetch(`${t.url}/v1/runs`, { headers: { 'x-api-key': SECRET.globexRo } });
    expect(elsewhere.status).toBe(401);
  });
});

async function grpcCall(
  address: string,
  path: string,
  body: Uint8Array,
  authorization: string | null,
): Promise<grpc.status> {
  const client = new grpc.Client(address, grpc.credentials.createInsecure());
  const metadata = new grpc.Metadata();
  if (authorization) metadata.set('authorization', authorization);
  try {
    return await new Promise<grpc.status>((resolve) => {
      client.makeUnaryRequest<Buffer, Buffer>(
        path,
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from(body),
        metadata,
        { deadline: Date.now() + 30_000 },
        (error) => resolve(error ? error.code : grpc.status.OK),
      );
    });
  } finally {
    client.close();
  }
}

describe('an open server', () => {
  it(
    'refuses to listen beyond loopback unless --allow-open, and serves on loopback',
    async () => {
      await expect(startTestTapedeck('pglite', { host: '0.0.0.0' })).rejects.toThrow(/--allow-open/);
      const open = await startTestTapedeck('pglite', { host: '0.0.0.0', allowOpen: true });
      try {
        expect(open.running.credentials.open).toBe(true);
        expect((await fetch(`${open.url}/v1/runs`)).status).toBe(200);
      } finally {
        await open.close();
      }
    },
    START_TIMEOUT_MS,
  );
});
