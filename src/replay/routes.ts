/**
 * @module replay/routes
 * The replay proxy's HTTP surface, a Hono app the main app mounts at /v1/replays:
 *   POST /                                   create a replay of a run
 *   GET  /:id                                its status
 *   POST /:id/tools/next                     the next recorded tool step
 *   POST /:id/openai/v1/chat/completions     OpenAI base URL: <origin>/v1/replays/<id>/openai/v1
 *   POST /:id/anthropic/v1/messages          Anthropic base URL: <origin>/v1/replays/<id>/anthropic
 *   *    /:id/...                            anything else under a base URL: 400
 * The credential is Authorization: Bearer, else x-api-key (what the Anthropic SDKs send);
 * any anthropic-version is accepted. Nothing here makes an outbound request.
 * A replay holding what an erasure covers is withdrawn: every call answers 410 replay_erased.
 * Replicas sharing a database (deps.owners) share replays: a call for one another replica
 * holds is forwarded to it (forward.ts) before anything here reads it.
 */
import { randomBytes } from 'node:crypto';
import { Hono, type Context, type MiddlewareHandler } from 'hono';
import { accessOf } from '../auth/access.js';
import { allow } from '../auth/route-auth.js';
import { ApiError } from '../errors.js';
import { parseJsonObject } from '../http/json-body.js';
import { jsonResponse } from '../http/json-response.js';
import { storedRunId } from '../http/query-params.js';
import { FORWARDED_BY, forwardToOwner } from './forward.js';
import { MAX_SPEED, Playback } from './playback.js';
import { readBodyText } from './read-body.js';
import { ReplayRegistry } from './registry.js';
import { Replay } from './replay.js';
import { readAnthropicRequest, readOpenAiRequest, type Wire } from './request-shapes.js';
import { type CallContext, serveModelCall, serveNextTool } from './serve-call.js';
import { buildSnapshot } from './snapshot.js';
import { newForkRunId, readForkPlan } from './fork.js';
import { serveForkCall } from './fork-call.js';
import { newForkTraceId } from './fork-spans.js';
import {
  defaultReplaySettings,
  type Principal,
  type ReplayDeps,
  type ReplaySettings,
  wallClockNs,
} from './settings.js';

/** A Hono app serving the replay routes, with its own in-memory registry. */
export function createReplayRoutes(deps: ReplayDeps, settings: Partial<ReplaySettings> = {}): Hono {
  const s: ReplaySettings = { ...defaultReplaySettings, ...settings };
  const now = deps.now ?? wallClockNs;
  const registry = new ReplayRegistry<Replay>(s, now);
  deps.observeRegistry?.(registry);
  const ctx: CallContext = { deps, settings: s, now };
  const app = new Hono();
  const erasures = deps.erasures;

  /** Withdraws the replay when an erasure since its last check covers what it holds. */
  function checkErasures(replay: Replay): void {
    if (!erasures || replay.withdrawnBy !== null || erasures.latest <= replay.erasureSeq) return;
    const latest = erasures.latest;
    const by = erasures.covering(replay.erasureSeq, replay.snapshot.held);
    replay.erasureSeq = latest;
    if (by !== null) {
      replay.withdraw(by);
      registry.withdraw(replay);
    }
  }
  // At once, so a withdrawn replay frees its place and memory without waiting for a call.
  erasures?.subscribe(() => {
    for (const replay of registry.live()) checkErasures(replay);
  });

  const owners = deps.owners;
  if (owners) {
    const forward: MiddlewareHandler = async (c, next) => {
      const id = c.req.param('id') ?? '';
      const self = owners.self;
      if (self === null || registry.get(id) || c.req.header(FORWARDED_BY) !== undefined) return next();
      const owner = await owners.ownerOf(id, now());
      if (owner === undefined || owner === self) return next();
      try {
        return await forwardToOwner(c.req.raw, owner, self, id);
      } catch (error) {
        // An owner that stopped gracefully took its replays with it: then the id is unknown.
        if (error instanceof ApiError && (await owners.ownerOf(id, now(), true)) === undefined) return next();
        throw error;
      }
    };
    // On the methods '/:id' answers, so the route table holds no path without an auth decision.
    app.on(['GET', 'PATCH'], '/:id', forward);
    app.use('/:id/*', forward);
  }

  // A call's time runs from when its request line and headers were read. Errors thrown
  // here are rendered by the application's onError (http/error-response.ts).
  const handle =
    (fn: (c: Context, receivedNs: bigint) => Promise<Response>) =>
    (c: Context): Promise<Response> =>
      fn(c, now());

  /** Who calls: the application's authentication (auth/route-auth.ts) has checked the credential. */
  function principalOf(c: Context): Principal {
    const access = accessOf(c);
    return { tenant: access.tenant, bound: !access.operator };
  }

  /** The replay this principal may use; a foreign or unknown id is 404 alike. */
  async function replayOf(c: Context): Promise<Replay> {
    const principal = principalOf(c);
    const id = c.req.param('id') ?? '';
    const replay = registry.get(id);
    if (replay) await erasures?.refresh?.();
    if (!replay || (principal.bound && replay.tenant !== principal.tenant)) {
      throw new ApiError('not_found', `no live replay ${JSON.stringify(id)} (replays live one hour, in memory)`);
    }
    checkErasures(replay);
    if (replay.withdrawnBy !== null) {
      throw new ApiError(
        'replay_erased',
        `replay ${replay.id} was withdrawn: erasure ${replay.withdrawnBy} covers what it held`,
        { extra: { erasure: replay.withdrawnBy } },
      );
    }
    return replay;
  }

  app.post(
    '/',
    allow.replay,
    handle(async (c) => {
      const principal = principalOf(c);
      const body = await readJsonBody(c, s.maxRequestBytes, false);
      if (typeof body.run !== 'string' || body.run === '')
        throw new ApiError('bad_input', 'the body must name a run: {"run": "<run id>"}');
      const run = storedRunId(body.run);
      const mode = body.mode ?? 'strict';
      if (mode !== 'strict' && mode !== 'loose')
        throw new ApiError('bad_input', `mode must be "strict" or "loose", not ${JSON.stringify(mode)}`);
      const playback = playbackOf(body);
      const shareKey = principal.bound ? `tenant:${principal.tenant ?? ''}` : 'operator';
      const reservation = registry.reserve(shareKey, principal.bound);
      try {
        // an operator reads the tenant it named (or the default one)
        const readTenant = principal.tenant;
        // Before the read: an erasure recorded while the tape is read is checked against it.
        await erasures?.refresh?.();
        const erasureSeq = erasures?.latest ?? 0n;
        const tape = await deps.loadTape(run, readTenant);
        if (!tape) throw new ApiError('not_found', `no run ${JSON.stringify(run)}`);
        const plan = await readForkPlan(body.fork, tape, deps);
        if (plan && !deps.recordSpans)
          throw new ApiError(
            'bad_input',
            'fork: this server cannot record a fork (no store is wired to the replay routes)',
          );
        const snapshot = await buildSnapshot(tape, deps, {
          mode,
          settings: s,
          charge: (n) => reservation.charge(n),
          untilStep: plan?.atStep,
        });
        const id = `rp_${randomBytes(16).toString('hex')}`;
        const createdNs = now();
        const replay = new Replay({
          id,
          snapshot,
          shareKey,
          readTenant,
          tenant: principal.bound ? principal.tenant : tape.tenant,
          expiresNs: createdNs + s.ttlNs,
          callLogEntries: s.callLogEntries,
          playback,
          erasureSeq,
          fork: plan && {
            ...plan,
            run: newForkRunId(),
            origin: snapshot.run,
            traceId: newForkTraceId(),
            llmIndex: snapshot.llm.length,
            answerServed: false,
            liveCalls: 0,
          },
        });
        await erasures?.refresh?.();
        checkErasures(replay);
        if (replay.withdrawnBy !== null) throw new ApiError('not_found', `no run ${JSON.stringify(run)}`);
        await owners?.claim(id, replay.expiresNs, createdNs);
        reservation.commit(replay);
        const base = `${(deps.baseUrl?.(c.req.raw) ?? new URL(c.req.url).origin).replace(/\/$/, '')}${s.mountPath}/${id}`;
        return jsonResponse(
          {
            id,
            run: snapshot.run,
            mode,
            steps: snapshot.steps,
            llm_steps: snapshot.llm.length,
            expires_at_ns: replay.expiresNs,
            unreadable_tool_steps: snapshot.unreadableToolSteps,
            base_urls: { openai: `${base}/openai/v1`, anthropic: `${base}/anthropic` },
            playback: playback.state(),
            ...(replay.fork
              ? {
                  fork: {
                    run: replay.fork.run,
                    at_step: replay.fork.atStep,
                    edited_answer: replay.fork.answer !== null,
                    upstreams: {
                      openai: Boolean(deps.upstreams?.openai),
                      anthropic: Boolean(deps.upstreams?.anthropic),
                    },
                  },
                }
              : {}),
          },
          201,
        );
      } finally {
        reservation.release(); // no-op once committed
      }
    }),
  );

  app.get(
    '/:id',
    allow.replay,
    handle(async (c) => jsonResponse((await replayOf(c)).status())),
  );

  // Pause, resume or change the speed of timed playback: {"paused": true|false, "speed": X}.
  app.patch(
    '/:id',
    allow.replay,
    handle(async (c) => {
      const replay = await replayOf(c);
      const body = await readJsonBody(c, s.maxRequestBytes, false, s.bodyTimeoutMs);
      if (body.paused !== undefined && typeof body.paused !== 'boolean')
        throw new ApiError('bad_input', '"paused" must be true or false');
      if (body.speed !== undefined) replay.playback.speed = speedOf(body.speed);
      if (body.paused === true) replay.playback.pause();
      if (body.paused === false) replay.playback.unpause();
      return jsonResponse(replay.status());
    }),
  );

  app.post(
    '/:id/tools/next',
    allow.replay,
    handle(async (c) => {
      const replay = await replayOf(c);
      const served = await replay.takeTurn(async () => {
        const body = await readJsonBody(c, s.maxRequestBytes, true, s.bodyTimeoutMs);
        const tool = body.tool ?? null;
        if (tool !== null && typeof tool !== 'string') throw new ApiError('bad_input', '"tool" must be a tool name');
        return serveNextTool(replay, tool, ctx);
      });
      return jsonResponse(served);
    }),
  );

  const modelRoute = (wire: Wire) =>
    handle(async (c, receivedNs) => {
      const replay = await replayOf(c);
      if (c.req.method !== 'POST') throw unsupported(c);
      // The turn first, then the body: calls waiting for this replay hold no body.
      const rendered = await replay.takeTurn(async () => {
        const text = await readBodyText(c, s.maxRequestBytes, s.bodyTimeoutMs);
        const body = jsonBodyOf(text, false);
        const req = wire === 'openai' ? readOpenAiRequest(body) : readAnthropicRequest(body);
        if (replay.fork)
          return serveForkCall(replay, { req, bodyText: text, headers: c.req.raw.headers, receivedNs }, ctx);
        return serveModelCall(replay, req, receivedNs, ctx);
      });
      if (rendered instanceof Response) return rendered;
      const paced = replay.playback.pace(rendered.body, rendered.durationNs, rendered.firstChunkNs);
      return new Response(paced, {
        status: 200,
        headers: { 'content-type': rendered.contentType, 'cache-control': 'no-store' },
      });
    });
  app.all('/:id/openai/v1/chat/completions', allow.replay, modelRoute('openai'));
  app.all('/:id/anthropic/v1/messages', allow.replay, modelRoute('anthropic'));
  app.all(
    '/:id/*',
    allow.replay,
    handle(async (c) => {
      await replayOf(c);
      throw unsupported(c);
    }),
  );

  return app;
}

/** "timing": "fast" (default) or "recorded", and "speed" (default 1), from a creation body. */
export function playbackOf(body: Record<string, unknown>): Playback {
  const timing = body.timing ?? 'fast';
  if (timing !== 'fast' && timing !== 'recorded')
    throw new ApiError('bad_input', `timing must be "fast" or "recorded", not ${JSON.stringify(timing)}`);
  return new Playback(timing, body.speed === undefined ? 1 : speedOf(body.speed));
}

function speedOf(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > MAX_SPEED)
    throw new ApiError('bad_input', `speed must be a number above 0 and at most ${MAX_SPEED}`);
  return v;
}

function unsupported(c: Context): ApiError {
  const path = new URL(c.req.url).pathname;
  return new ApiError(
    'unsupported_endpoint',
    `${c.req.method} ${path} is not replayed: a replay answers only POST …/openai/v1/chat/completions and POST …/anthropic/v1/messages (not the Responses API, embeddings or legacy completions)`,
  );
}

async function readJsonBody(
  c: Context,
  maxBytes: number,
  emptyAllowed: boolean,
  timeoutMs?: number,
): Promise<Record<string, unknown>> {
  return jsonBodyOf(await readBodyText(c, maxBytes, timeoutMs), emptyAllowed);
}

function jsonBodyOf(text: string, emptyAllowed: boolean): Record<string, unknown> {
  if (text.trim() === '') {
    if (emptyAllowed) return {};
    throw new ApiError('bad_input', 'the request has no body; a JSON object was expected');
  }
  return parseJsonObject(text);
}
