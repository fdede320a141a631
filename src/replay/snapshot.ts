/**
 * @module replay/snapshot
 * The copy a replay serves from, taken out of a tape when the replay is created. It holds
 * only what it serves: each model step's answer, the digest of its prompt (the prompt itself is
 * read, digested and dropped), and each tool step's arguments and result. Memory is charged as
 * the copy grows, so a snapshot too large for its share is refused as soon as it passes it.
 *
 * Refusals, each naming the step: a model step with no recorded answer, an offloaded answer
 * that cannot be read (and why), in strict mode a prompt that is not a message list; and a
 * run longer than the span bound, which would otherwise replay as its beginning.
 */
import type { Message, Tape, Tokens } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { comparableDigest } from '../normalize/comparable.js';
import { type RequestOptions, requestIdentity, requestOptionsOf } from '../normalize/request-options.js';
import { type Answer, readAnswer } from './answer.js';
import { refusal } from './errors.js';
import { storedReferenceOf } from '../payloads/stored-reference.js';
import { describeUnreadable, PayloadReader, UnreadableValue } from './payload-refs.js';
import { readRecordedPrompt } from './recorded-prompt.js';
import { usableName } from './request-shapes.js';
import type { HeldContent, ReplayDeps, ReplaySettings } from './settings.js';

export type ReplayMode = 'strict' | 'loose';

export interface LlmEntry {
  step: number;
  /**
   * digest of the recorded prompt's canonical messages with the request options the step
   * recorded (normalize/request-options.ts); null when it cannot be compared
   */
  digest: string | null;
  /** the request options the step recorded: a call is compared on these alone */
  options: RequestOptions;
  answer: Answer;
  tokens: Tokens;
  model: string | null;
  startNs: bigint;
  /** the recorded call's duration and time to first chunk (when recorded), for timed playback */
  durationNs: bigint;
  firstChunkNs: bigint | null;
}

export interface ToolEntry {
  step: number;
  tool: string | null;
  arguments: JsonValue;
  result: JsonValue;
  /** why the step cannot be served, or null */
  unreadable: string | null;
}

export interface Snapshot {
  run: string;
  tenant: string | null;
  mode: ReplayMode;
  steps: number;
  llm: LlmEntry[];
  tools: ToolEntry[];
  unreadableToolSteps: number[];
  /** what erasures are checked against (replay.ts drops it with the rest when withdrawn) */
  held: HeldContent;
}

/** Counted generously: UTF-16 strings with headers, objects and arrays with their slots. */
export function estimateBytes(v: unknown): number {
  if (v === null || v === undefined) return 8;
  switch (typeof v) {
    case 'string':
      return 48 + 2 * v.length;
    case 'number':
    case 'boolean':
      return 16;
    case 'bigint':
      return 32;
  }
  if (Array.isArray(v)) return v.reduce((n: number, item) => n + 8 + estimateBytes(item), 48);
  let n = 64;
  for (const [k, item] of Object.entries(v as object)) n += 24 + estimateBytes(k) + estimateBytes(item);
  return n;
}

/** Fixed cost of one replay: its call log at full bound (step, matched, at_ns ≈ 24 bytes) and its bookkeeping. */
export function replayBaseBytes(settings: ReplaySettings): number {
  return settings.callLogEntries * 24 + 4096;
}

const ENTRY_OVERHEAD_BYTES = 256;

export interface BuildOptions {
  mode: ReplayMode;
  settings: ReplaySettings;
  /** charges counted memory; throws when a bound is passed */
  charge(bytes: number): void;
  /** a fork's step: only the steps before it are served from the recording, so only they are held */
  untilStep?: number;
}

export async function buildSnapshot(
  tape: Tape,
  deps: Pick<ReplayDeps, 'readPayload' | 'whyUnreadable' | 'firstChunkNs'>,
  opts: BuildOptions,
): Promise<Snapshot> {
  const { settings, mode } = opts;
  const until = opts.untilStep ?? Number.POSITIVE_INFINITY;
  // A fork that goes live within the steps read serves nothing past them.
  const cut = tape.truncated || tape.spans_examined > settings.maxRunSpans;
  if (cut && !tape.steps.some((s) => s.index >= until)) {
    throw refusal(
      'run_too_long',
      `run ${tape.run} has more than ${settings.maxRunSpans} spans; replaying its beginning would end the agent's run early as if the recording stopped there`,
    );
  }
  opts.charge(replayBaseBytes(settings) + estimateBytes(tape.run) + estimateBytes(tape.tenant));
  const answers = new PayloadReader(deps, settings.tapeMaxBytes);
  const prompts = new PayloadReader(deps, null);
  const snap: Snapshot = {
    run: tape.run,
    tenant: tape.tenant,
    mode,
    steps: tape.steps.length,
    llm: [],
    tools: [],
    unreadableToolSteps: [],
    held: heldContentOf(tape),
  };
  opts.charge(estimateBytes([...snap.held.traces, ...snap.held.spans, ...snap.held.payloads]));

  for (const step of tape.steps) {
    if (step.index >= until) break;
    if (step.kind === 'llm') {
      let answer: Answer | null;
      try {
        answer = await readAnswer(step.response, answers);
      } catch (err) {
        if (!(err instanceof UnreadableValue)) throw err;
        throw refusal(
          'answer_unreadable',
          `model step ${step.index}'s offloaded answer ${describeUnreadable(err.why, err.limitBytes)} (${err.ref}), so it cannot be served`,
          step.index,
        );
      }
      if (answer === null) {
        throw refusal(
          'answer_not_recorded',
          `model step ${step.index} has no recorded answer (was content capture off?), so a replay cannot serve it`,
          step.index,
        );
      }
      const prompt = await readRecordedPrompt(step.request, prompts);
      const options = requestOptionsOf(step.params);
      if (prompt.kind !== 'messages' && mode === 'strict') {
        throw refusal(
          'prompt_not_messages',
          `model step ${step.index} cannot be matched in strict mode: ${prompt.why}; use "mode": "loose"`,
          step.index,
        );
      }
      const entry: LlmEntry = {
        step: step.index,
        digest: prompt.kind === 'messages' ? requestDigest(prompt.messages, options) : null,
        options,
        answer,
        tokens: { ...step.tokens },
        model: usableName(step.model),
        startNs: step.start_ns,
        durationNs: step.duration_ns,
        firstChunkNs: deps.firstChunkNs?.(tape.run, step.index) ?? null,
      };
      opts.charge(
        ENTRY_OVERHEAD_BYTES +
          estimateBytes(answer) +
          estimateBytes(entry.model) +
          estimateBytes(entry.digest) +
          estimateBytes(options),
      );
      snap.llm.push(entry);
    } else if (step.kind === 'tool') {
      const entry = await readToolStep(step.index, step.tool, step.request, step.response, answers);
      if (entry.unreadable !== null) snap.unreadableToolSteps.push(step.index);
      opts.charge(
        ENTRY_OVERHEAD_BYTES + estimateBytes(entry.tool) + estimateBytes(entry.arguments) + estimateBytes(entry.result),
      );
      snap.tools.push(entry);
    }
  }
  return snap;
}

async function readToolStep(
  index: number,
  tool: string | null,
  request: JsonValue | null,
  response: JsonValue | null,
  reader: PayloadReader,
): Promise<ToolEntry> {
  const entry: ToolEntry = { step: index, tool, arguments: null, result: null, unreadable: null };
  try {
    entry.arguments = request === null ? null : await reader.resolveStored(request);
    if (response === null) {
      entry.unreadable = `tool step ${index} recorded no result (was content capture off?)`;
    } else {
      entry.result = await reader.resolveStored(response);
    }
  } catch (err) {
    if (!(err instanceof UnreadableValue)) throw err;
    entry.unreadable = `tool step ${index}'s offloaded value ${describeUnreadable(err.why, err.limitBytes)} (${err.ref})`;
  }
  if (entry.unreadable !== null) {
    entry.arguments = null; // hold nothing that will not be served
    entry.result = null;
  }
  return entry;
}

/**
 * The digest a model call is matched on: its canonical messages with the request options
 * (the tape's request_digest, finish.ts requestDigestOf, for a recorded prompt).
 */
export function requestDigest(messages: readonly Message[], options: RequestOptions): string {
  return comparableDigest(requestIdentity(messages as unknown as JsonValue, options)) as string;
}

/** The agent's request options that the recording has too: a layout that recorded none compares messages alone. */
export function comparableOptions(got: RequestOptions, recorded: RequestOptions): RequestOptions {
  const out: RequestOptions = {};
  for (const k of Object.keys(recorded) as (keyof RequestOptions)[])
    if (got[k] !== undefined) (out as Record<string, unknown>)[k] = got[k];
  return out;
}

/** The tenant, run, traces, spans and referenced payloads of the tape a replay is taken from. */
function heldContentOf(tape: Tape): HeldContent {
  const traces = new Set<string>();
  const spans = new Set<string>();
  const payloads = new Set<string>();
  // offload leaves a reference as the whole value or after a message list's system messages
  const refsOf = (v: JsonValue | null) => {
    const at = storedReferenceOf(v);
    if (at !== null) payloads.add(at.ref);
  };
  for (const step of tape.steps) {
    traces.add(step.trace_id);
    spans.add(`${step.trace_id}/${step.span_id}`);
    refsOf(step.request);
    refsOf(step.response);
  }
  return { tenant: tape.tenant ?? '', run: tape.run, traces, spans, payloads };
}
