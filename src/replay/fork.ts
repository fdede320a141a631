/**
 * @module replay/fork
 * A fork (docs/forks.md): a replay created with `"fork": {"at_step": N, "answer": MESSAGE?}`.
 * Model calls before tape step N are served from the recording, strict or loose as usual; the
 * call at step N gets the edited answer when one was given; every call after that (or from
 * step N on, without an answer) is forwarded to the configured upstream provider. Everything
 * the fork answers is recorded as a new run (fork-spans.ts).
 *
 * This module reads the request's `fork` object into a plan, refusing what cannot be forked
 * with 400 naming the field: N must be the index of a model step on the tape; the answer must
 * be one assistant message in the canonical shape (role, content, tool_calls with name and
 * arguments, finish_reason).
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../errors.js';
import type { JsonValue } from '../json/json-value.js';
import type { Tape } from '../normalize/step.js';
import { type Answer, readAnswer } from './answer.js';
import { PayloadReader } from './payload-refs.js';
import { usableName } from './request-shapes.js';
import type { ReplayDeps } from './settings.js';

export interface ForkPlan {
  atStep: number;
  answer: Answer | null;
  /** the recorded model of the step at atStep, for rendering the edited answer */
  atModel: string | null;
}

/** A live fork's state, held by its replay. */
export interface ForkState extends ForkPlan {
  /** the fork's own run id */
  run: string;
  origin: string;
  traceId: string;
  /** index into the snapshot's model steps where the fork parts: every recorded one before it */
  llmIndex: number;
  answerServed: boolean;
  liveCalls: number;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

function bad(message: string): ApiError {
  return new ApiError('bad_input', `fork: ${message}`);
}

export function newForkRunId(): string {
  return `fork_${randomBytes(8).toString('hex')}`;
}

/** Reads the body's `fork` (undefined when absent) against the tape it forks. */
export async function readForkPlan(
  raw: unknown,
  tape: Tape,
  deps: Pick<ReplayDeps, 'readPayload' | 'whyUnreadable'>,
): Promise<ForkPlan | undefined> {
  if (raw === undefined) return undefined;
  if (!isObj(raw)) throw bad('expected an object {"at_step": <step index>, "answer": <message>?}');
  const atStep = raw.at_step;
  if (typeof atStep !== 'number' || !Number.isInteger(atStep) || atStep < 0)
    throw bad(`at_step must be a step index (a whole number >= 0), not ${JSON.stringify(atStep)}`);
  const step = tape.steps.find((s) => s.index === atStep);
  if (step?.kind !== 'llm') {
    const llm = tape.steps.filter((s) => s.kind === 'llm').map((s) => s.index);
    throw bad(
      `at_step ${atStep} is not a model step of run ${tape.run} (its model steps are ${llm.length ? llm.join(', ') : 'none'})`,
    );
  }
  return {
    atStep,
    answer: raw.answer === undefined || raw.answer === null ? null : await readEditedAnswer(raw.answer, deps),
    atModel: usableName(step.model),
  };
}

async function readEditedAnswer(raw: unknown, deps: Pick<ReplayDeps, 'readPayload'>): Promise<Answer> {
  if (!isObj(raw)) throw bad('answer must be one message object {"role": "assistant", "content": ...}');
  if (raw.role !== undefined && raw.role !== 'assistant')
    throw bad(`answer is the model's, so its role is "assistant", not ${JSON.stringify(raw.role)}`);
  const content = raw.content;
  if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content))
    throw bad('answer.content must be text or a list of parts');
  const calls = raw.tool_calls;
  if (calls !== undefined && !Array.isArray(calls)) throw bad('answer.tool_calls must be a list');
  for (const [i, call] of (calls ?? []).entries()) {
    if (!isObj(call) || typeof call.name !== 'string' || call.name === '')
      throw bad(`answer.tool_calls[${i}] needs a "name"`);
    if (call.id !== undefined && typeof call.id !== 'string') throw bad(`answer.tool_calls[${i}].id must be text`);
  }
  if (raw.finish_reason !== undefined && typeof raw.finish_reason !== 'string')
    throw bad('answer.finish_reason must be text (stop, tool_calls, length, content_filter)');
  const answer = await readAnswer([{ ...raw, role: 'assistant' } as JsonValue], new PayloadReader(deps, null));
  if (!answer || (answer.text === null && answer.toolCalls.length === 0))
    throw bad('answer says nothing: give it content or tool_calls');
  return answer;
}
