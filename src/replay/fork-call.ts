/**
 * @module replay/fork-call
 * One agent call through a fork, in its replay's turn (fork.ts says what a fork is):
 * - before the fork's step: the recorded answer, exactly as a replay serves it (serve-call.ts);
 * - at the step, when an edited answer was given: that answer, rendered as the recorded ones
 *   are (plain or streamed), once;
 * - past it: the agent's request body, byte for byte, to the wire's upstream (OpenAI
 *   `<base>/chat/completions` with Bearer key, Anthropic `<base>/v1/messages` with x-api-key
 *   and the agent's anthropic-version), and the upstream's answer back as it came, streamed
 *   through as it arrives. No upstream for the wire: 409 upstream_not_configured, nothing
 *   sent. An upstream that cannot be reached or does not answer within its timeout: 503
 *   upstream_unavailable (retryable; the fork has not moved).
 * Each answered call is recorded (fork-spans.ts) before the agent sees the end of its answer,
 * so the fork's run is readable once the call is answered; a stream is recorded when it ends.
 */
import { ApiError } from '../errors.js';
import type { Tokens } from '../normalize/step.js';
import { forkCallSpan, type ForkAnswerSource } from './fork-spans.js';
import type { ForkState } from './fork.js';
import { renderAnthropic } from './render-anthropic.js';
import type { Rendered, RenderInput } from './render-common.js';
import { renderOpenAi } from './render-openai.js';
import type { Replay } from './replay.js';
import type { AgentRequest } from './request-shapes.js';
import { type CallContext, serveModelCall } from './serve-call.js';
import { assembleStream } from './stream-assembly.js';

export interface ForkCallInput {
  req: AgentRequest;
  /** the request body as the agent sent it */
  bodyText: string;
  headers: Headers;
  receivedNs: bigint;
}

const NO_TOKENS: Tokens = { input: null, output: null, cache_read: null, cache_write: null, context: null };

export async function serveForkCall(replay: Replay, call: ForkCallInput, ctx: CallContext): Promise<Response> {
  const fork = replay.fork as ForkState;
  if (replay.cursor < fork.llmIndex) {
    const rendered = await serveModelCall(replay, call.req, call.receivedNs, ctx);
    await record(replay, call, ctx, 'recorded', unstreamed(call.req, rendered), null);
    return renderedResponse(rendered);
  }
  if (fork.answer && !fork.answerServed) {
    const input: RenderInput = {
      replayId: replay.id,
      step: fork.atStep,
      answer: fork.answer,
      tokens: NO_TOKENS,
      stepModel: fork.atModel,
      startNs: call.receivedNs,
      requestModel: call.req.model,
      stream: call.req.stream,
      includeUsage: call.req.includeUsage,
      maxBytes: ctx.settings.maxResponseBytes,
    };
    const render = call.req.wire === 'openai' ? renderOpenAi : renderAnthropic;
    const rendered = render(input);
    const plain = JSON.parse(render({ ...input, stream: false }).body.toString('utf8')) as unknown;
    await record(replay, call, ctx, 'edited', plain, null);
    fork.answerServed = true;
    return renderedResponse(rendered);
  }
  return forward(replay, call, ctx);
}

function renderedResponse(rendered: Rendered): Response {
  return new Response(rendered.body, {
    status: 200,
    headers: { 'content-type': rendered.contentType, 'cache-control': 'no-store' },
  });
}

function unstreamed(req: AgentRequest, rendered: Rendered): unknown {
  const text = rendered.body.toString('utf8');
  return req.stream ? assembleStream(req.wire, text) : JSON.parse(text);
}

async function record(
  replay: Replay,
  call: ForkCallInput,
  ctx: CallContext,
  source: ForkAnswerSource,
  responseBody: unknown,
  errorStatus: number | null,
): Promise<void> {
  const fork = replay.fork as ForkState;
  const span = forkCallSpan({
    forkRun: fork.run,
    origin: fork.origin,
    atStep: fork.atStep,
    traceId: fork.traceId,
    wire: call.req.wire,
    source,
    requestText: call.bodyText,
    responseBody,
    startNs: call.receivedNs,
    endNs: ctx.now(),
    errorStatus,
  });
  await (ctx.deps.recordSpans as NonNullable<typeof ctx.deps.recordSpans>)([span], replay.tenant ?? '');
}

async function forward(replay: Replay, call: ForkCallInput, ctx: CallContext): Promise<Response> {
  const { wire } = call.req;
  const upstream = ctx.deps.upstreams?.[wire];
  if (!upstream) {
    const setting = wire === 'openai' ? '--upstream-openai' : '--upstream-anthropic';
    throw new ApiError(
      'upstream_not_configured',
      `this fork is past its edited answer, so this ${wire} call would go to the real provider, and no ${wire} upstream is configured (${setting}); nothing was sent`,
    );
  }
  const base = upstream.baseUrl.replace(/\/+$/, '');
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (wire === 'openai') {
    if (upstream.key) headers.authorization = `Bearer ${upstream.key}`;
  } else {
    if (upstream.key) headers['x-api-key'] = upstream.key;
    headers['anthropic-version'] = call.headers.get('anthropic-version') ?? '2023-06-01';
    const beta = call.headers.get('anthropic-beta');
    if (beta) headers['anthropic-beta'] = beta;
  }
  const url = wire === 'openai' ? `${base}/chat/completions` : `${base}/v1/messages`;
  const signal = AbortSignal.timeout(ctx.settings.upstreamTimeoutMs);
  let res: Response;
  try {
    res = await (ctx.deps.fetch ?? fetch)(url, { method: 'POST', headers, body: call.bodyText, signal });
  } catch (error) {
    throw unavailable(wire, error);
  }
  const fork = replay.fork as ForkState;
  fork.liveCalls++;
  const contentType = res.headers.get('content-type') ?? 'application/json';
  const errorStatus = res.ok ? null : res.status;
  if (!call.req.stream || !res.ok || !res.body) {
    let text: string;
    try {
      text = await res.text();
    } catch (error) {
      throw unavailable(wire, error);
    }
    await record(replay, call, ctx, 'live', parsedOrText(text), errorStatus);
    return new Response(text, { status: res.status, headers: { 'content-type': contentType } });
  }
  // Passed through as it arrives; kept (within the response bound) to be recorded at its end.
  const chunks: Uint8Array[] = [];
  let kept = 0;
  const decoder = new TextDecoder();
  const through = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      if (kept + chunk.byteLength <= ctx.settings.maxResponseBytes) {
        chunks.push(chunk);
        kept += chunk.byteLength;
      }
      controller.enqueue(chunk);
    },
    async flush() {
      const text = chunks.map((c) => decoder.decode(c, { stream: true })).join('') + decoder.decode();
      await record(replay, call, ctx, 'live', assembleStream(wire, text), null);
    },
  });
  return new Response(res.body.pipeThrough(through), {
    status: res.status,
    headers: { 'content-type': contentType, 'cache-control': 'no-store' },
  });
}

function parsedOrText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function unavailable(wire: string, error: unknown): ApiError {
  const why =
    error instanceof Error && error.name === 'TimeoutError' ? 'did not answer in time' : 'could not be reached';
  return new ApiError('upstream_unavailable', `the ${wire} upstream ${why}; the fork has not moved, retry the call`, {
    cause: error,
  });
}
