/**
 * @module replay/errors
 * Why creating a replay was refused: 409 replay_refused with a named reason (and the step,
 * when one step is the cause). Every other refusal on the replay routes is an ApiError of
 * its own type (errors.ts); the application's one renderer answers them all.
 */
import { ApiError } from '../errors.js';

export type RefusalReason =
  | 'answer_not_recorded'
  | 'answer_unreadable'
  | 'prompt_not_messages'
  | 'run_too_long'
  | 'snapshot_too_large';

export function refusal(reason: RefusalReason, message: string, step?: number): ApiError {
  const extra: Record<string, unknown> = { reason };
  if (step !== undefined) extra.step = step;
  return new ApiError('replay_refused', message, { extra });
}
