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

/**
 * The finish_reason of an answer (a message of a step's response) stored as its turn;
 * undefined: stored whole.
 */
export function answerReason(message: { readonly [key: string]: JsonValue }): string | undefined {
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
  return after ? reason : undefined;
}

/**
 * The turn's canonical JSON (UTF-8) from the answer's, whose reason answerReason gave: the
 * reason's member cut out where withFinishReason puts it back, rather than the message
 * written again without it. undefined when the member is not there as withFinishReason
 * writes it (the answer is then stored whole).
 */
export function turnOf(answer: Uint8Array, reason: string): Uint8Array | undefined {
  const text = Buffer.from(answer.buffer, answer.byteOffset, answer.byteLength);
  const at = reasonAt(text);
  const member = memberOf(reason);
  const length = Buffer.byteLength(member);
  if (text.toString('utf8', at, at + length) !== member) return undefined;
  const turn = new Uint8Array(answer.length - length);
  turn.set(answer.subarray(0, at));
  turn.set(answer.subarray(at + length), at);
  return turn;
}

/** The answer's canonical JSON from its turn's (as turnOf cut it) and its finish_reason. */
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
  return [turn.slice(0, at), memberOf(reason), turn.slice(at)];
}

/** The reason's member and its comma, as canonical JSON writes it. */
function memberOf(reason: string): string {
  let member = members.get(reason);
  if (member === undefined) {
    member = `"${FINISH_REASON}":${JSON.stringify(reason)},`;
    if (members.size < MEMBERS_KEPT) members.set(reason, member);
  }
  return member;
}

/** The reason's member by reason: a handful of reasons ("stop", "tool_calls", ...) are most. */
const members = new Map<string, string>();
const MEMBERS_KEPT = 64;

/**
 * Where the reason's member goes in a turn's text (or is, in the answer's: what precedes it
 * is the same), as UTF-16 units of a string or bytes of UTF-8: after the content string and
 * its comma, or after the brace. The string ends at the first quote after an even number of
 * backslashes (indexOf finds the quotes quicker than a loop over every character; in UTF-8
 * no byte of another character is a quote or a backslash).
 */
function reasonAt(text: string | Buffer): number {
  const opens =
    typeof text === 'string'
      ? text.startsWith(CONTENT_STRING)
      : text.toString('latin1', 0, CONTENT_STRING.length) === CONTENT_STRING;
  if (!opens) return 1;
  for (let from = CONTENT_STRING.length; ; ) {
    const quote = text.indexOf('"', from);
    if (quote < 0) throw new Error('a stored answer turn ends inside its content');
    let escapes = 0;
    while (codeAt(text, quote - 1 - escapes) === 0x5c /* \ */) escapes++;
    if (escapes % 2 === 0) return quote + 2;
    from = quote + 1;
  }
}

function codeAt(text: string | Buffer, i: number): number {
  return typeof text === 'string' ? text.charCodeAt(i) : text[i];
}
