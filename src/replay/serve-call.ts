/**
 * @module replay/serve-call
 * One agent call through a replay, in its turn:
 * 1. a replay that expired while the call waited answers 404, nothing rendered;
 * 2. past the last model step: 410 replay_exhausted, counted;
 * 3. strict mode: a request whose canonical messages do not digest to the recorded step's is
 *    409 replay_divergence (x-should-retry: false) with both digests and, while the replay
 *    has explanations left, the first difference; the step is not consumed and the first
 *    divergence is remembered. Loose mode serves anyway and records the call as not matched;
 * 4. the answer is rendered within the response bound (409 response_too_large otherwise, step
 *    not consumed); an answer that finishes rendering after expiry is dropped unserved;
 * 5. the step is consumed and the call logged.
 * tools/next takes the same turns, on its own cursor. The caller takes the turn
 * (Replay.takeTurn) before it reads the request's body, so calls waiting for one replay hold
 * no body; these functions run inside it.
 */
import type { RequestOptions } from '../normalize/request-options.js';
import type { Message } from '../normalize/step.js';
import { ApiError } from '../errors.js';
import { type Difference, explainDifference, explainOptionsDifference } from './explain.js';
import { PayloadReader } from './payload-refs.js';
import { readRecordedPrompt } from './recorded-prompt.js';
import { renderAnthropic } from './render-anthropic.js';
import { type Rendered, type RenderInput, TooLarge } from './render-common.js';
import { renderOpenAi } from './render-openai.js';
import type { Replay } from './replay.js';
import { comparableOptions, type LlmEntry, requestDigest } from './snapshot.js';
import type { AgentRequest } from './request-shapes.js';
import type { ReplayDeps, ReplaySettings } from './settings.js';

export interface CallContext {
  deps: ReplayDeps;
  settings: ReplaySettings;
  now: () => bigint;
}

function expired(replay: Replay): ApiError {
  return new ApiError('not_found', `replay ${replay.id} has expired`);
}

/** A served answer, with the recorded timing its stream may be paced by (playback.ts). */
export interface ServedCall extends Rendered {
  durationNs: bigint;
  firstChunkNs: bigint | null;
}

export async function serveModelCall(
  replay: Replay,
  req: AgentRequest,
  receivedNs: bigint,
  ctx: CallContext,
): Promise<ServedCall> {
  if (replay.expiredAt(ctx.now())) throw expired(replay);
  const llm = replay.snapshot.llm;
  if (replay.cursor >= llm.length) {
    replay.exhaustedCalls++;
    throw new ApiError(
      'replay_exhausted',
      `every one of the recording's ${llm.length} model steps has been served; this call has no recorded answer`,
      { extra: { served: replay.served } },
    );
  }
  const entry = llm[replay.cursor];
  const gotOptions = comparableOptions(req.options, entry.options);
  const gotDigest = requestDigest(req.messages, gotOptions);
  const matched = entry.digest !== null && entry.digest === gotDigest;
  if (!matched && replay.snapshot.mode === 'strict') {
    const difference = await explainOnce(replay, entry, req.messages, gotOptions, ctx);
    const divergence = {
      step: entry.step,
      expected_digest: entry.digest,
      got_digest: gotDigest,
      ...(difference ? { difference } : {}),
    };
    replay.diverged ??= { ...divergence, at_ns: receivedNs };
    throw new ApiError(
      'replay_divergence',
      `this request's messages do not match recorded step ${entry.step}: the agent diverged from the recording, so replaying the recorded answer would answer a different question`,
      { extra: divergence },
    );
  }
  const input: RenderInput = {
    replayId: replay.id,
    step: entry.step,
    answer: entry.answer,
    tokens: entry.tokens,
    stepModel: entry.model,
    startNs: entry.startNs,
    requestModel: req.model,
    stream: req.stream,
    includeUsage: req.includeUsage,
    maxBytes: ctx.settings.maxResponseBytes,
  };
  let rendered: Rendered;
  try {
    rendered = req.wire === 'openai' ? renderOpenAi(input) : renderAnthropic(input);
  } catch (err) {
    if (!(err instanceof TooLarge)) throw err;
    throw new ApiError(
      'response_too_large',
      `step ${entry.step}'s answer would render past ${err.limitBytes} bytes${req.stream ? ' as a stream (the same step unstreamed may fit)' : ''}; the step was not consumed`,
      { extra: { step: entry.step, limit_bytes: err.limitBytes } },
    );
  }
  if (replay.expiredAt(ctx.now())) throw expired(replay);
  replay.consume(matched, receivedNs);
  // Built member by member: spreading `rendered` (of either renderer's shape) cost more than
  // the rest of this function.
  return {
    contentType: rendered.contentType,
    body: rendered.body,
    durationNs: entry.durationNs,
    firstChunkNs: entry.firstChunkNs,
  };
}

/**
 * Re-reads the recording to say where the request parts from it, at most maxExplanations
 * times per replay. Null when out of explanations, or when the recording no longer reads as
 * the prompt the replay digested.
 */
async function explainOnce(
  replay: Replay,
  entry: LlmEntry,
  messages: readonly Message[],
  options: RequestOptions,
  ctx: CallContext,
): Promise<Difference | null> {
  const { step, digest: expected } = entry;
  if (expected === null || replay.explanations >= ctx.settings.maxExplanations) return null;
  replay.explanations++;
  const tape = await ctx.deps.loadTape(replay.snapshot.run, replay.readTenant);
  const recorded = tape?.steps.find((s) => s.index === step && s.kind === 'llm');
  if (!recorded) return null;
  const prompt = await readRecordedPrompt(recorded.request, new PayloadReader(ctx.deps, null));
  if (prompt.kind !== 'messages' || requestDigest(prompt.messages, entry.options) !== expected) return null;
  return explainDifference(prompt.messages, messages) ?? explainOptionsDifference(entry.options, options);
}

export async function serveNextTool(
  replay: Replay,
  tool: string | null,
  ctx: CallContext,
): Promise<Record<string, unknown>> {
  if (replay.expiredAt(ctx.now())) throw expired(replay);
  const entry = replay.nextTool(tool);
  if (!entry) {
    const which = tool === null ? 'tool step' : `tool step for ${JSON.stringify(tool)}`;
    throw new ApiError('tools_exhausted', `no recorded ${which} is left to serve`, {
      extra: tool === null ? {} : { tool },
    });
  }
  if (entry.unreadable !== null) {
    // not consumed: moving past it would hand the harness the next step's result as this one's
    throw new ApiError('tool_unreadable', `${entry.unreadable}; it is not served as a result`, {
      extra: { step: entry.step, tool: entry.tool },
    });
  }
  replay.markToolServed(entry.step);
  return { step: entry.step, tool: entry.tool, arguments: entry.arguments, result: entry.result };
}
