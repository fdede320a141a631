/**
 * @module tapes/answer-turns
 * An answer is stored once with the history that resends it. A model step's answer carries
 * its `finish_reason`; the next call resends the same message without it, as history. Stored
 * whole, the two would be two messages of the store, each with its words in recall's index.
 * So the message store keeps the answer as its turn (the message without `finish_reason`,
 * the very message the history resends), and the step keeps the reason beside the id
 * (`steps.response_finish_reasons`), spliced back in wherever the answer is read: here for
 * the tape reader, in `tapedeck_store.with_finish_reason` for SQL (0025_answer_turns.sql).
 *
 * The splice is textual, on canonical JSON, so it must find where `"finish_reason"` sorts
 * among the members without parsing: an answer is stored as its turn only when no member but
 * `content` sorts before `finish_reason`, its content is a string or absent, and a member
 * sorts after it (`role` always does). The reason then goes after the content member, or first.
 */
import type { JsonValue } from '../json/json-value.js';

const FINISH_REASON = 'finish_reason';
const CONTENT_STRING = '{"content":"';

/** An answer (a message of a step's response) as its turn and its finish_reason; undefined: stored whole. */
export function answerTurn(message: {
  readonly [key: string]: JsonValue;
}): { turn: { [key: string]: JsonValue }; reason: string } | undefined {
  const reason = message[FINISH_REASON];
  if (typeof reason !== 'string') return undefined;
  const content = message.content;
  if (content !== undefined && typeof content !== 'string') return undefined;
  let after = false;
  for (const key of Object.keys(message)) {
    // canonical JSON orders members by UTF-16 code units, as `<` compares strings
    if (key < FINISH_REASON && key !== 'content') return undefined;
    if (key > FINISH_REASON) after = true;
  }
  if (!after) return undefined;
  const { [FINISH_REASON]: _, ...turn } = message;
  return { turn, reason };
}

/** The answer's canonical JSON from its turn's (as answerTurn stored it) and its finish_reason. */
export function withFinishReason(turn: string, reason: string): string {
  return withFinishReasonFragments(turn, reason).join('');
}

/**
 * withFinishReason's text in three fragments, to be written one after the other: the turn's
 * up to the reason, the reason's member, the rest of the turn (slices of the turn's string,
 * not copies of it).
 */
export function withFinishReasonFragments(turn: string, reason: string): [string, string, string] {
  const at = reasonAt(turn);
  let member = members.get(reason);
  if (member === undefined) {
    member = `"${FINISH_REASON}":${JSON.stringify(reason)},`;
    if (members.size < MEMBERS_KEPT) members.set(reason, member);
  }
  return [turn.slice(0, at), member, turn.slice(at)];
}

/** The reason's member by reason: a handful of reasons ("stop", "tool_calls", ...) are most. */
const members = new Map<string, string>();
const MEMBERS_KEPT = 64;

/**
 * Where the reason's member goes: after the content string and its comma, or after the brace.
 * The string ends at the first quote after an even number of backslashes (indexOf finds the
 * quotes quicker than a loop over every character).
 */
function reasonAt(turn: string): number {
  if (!turn.startsWith(CONTENT_STRING)) return 1;
  for (let from = CONTENT_STRING.length; ; ) {
    const quote = turn.indexOf('"', from);
    if (quote < 0) throw new Error('a stored answer turn ends inside its content');
    let escapes = 0;
    while (turn.charCodeAt(quote - 1 - escapes) === 0x5c /* \ */) escapes++;
    if (escapes % 2 === 0) return quote + 2;
    from = quote + 1;
  }
}
