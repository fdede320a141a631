/**
 * @module runs/conversation
 * A completed run as one conversation, in canonical messages: the first model call's prompt,
 * then every assistant turn and tool result, ending with the final answer. Pure. This is
 * what the dataset export writes (chat-format.ts turns it into OpenAI chat format).
 *
 * The best witness is the last model call itself: its request is the whole conversation as
 * the model saw it (tool results exactly as sent, later user turns included). It is used
 * whenever it begins with the first call's prompt. Otherwise (an agent that sends only the
 * new messages, as the Anthropic tool runner does) the conversation is rebuilt: the prompt,
 * then each model call's answer followed by the results of the tools it asked for, with the
 * user turns a later call was sent beyond them (those after its request's last answer or tool
 * result) before its answer, so no prompt the agent was given is lost.
 */
import type { Message, Tape, ToolCall } from '../normalize/step.js';
import type { ReconstructedRun, ReconstructedToolCall } from './reconstruct.js';
import { llmSteps, messagesOf, sameJson } from './messages.js';

export type ConversationGap = 'no_input' | 'no_output';

export type Conversation = { messages: Message[] } | { gap: ConversationGap };

/** Answer messages as they go back into a conversation (a finish reason is not part of a turn). */
function asTurn(m: Message): Message {
  const { finish_reason: _finish, ...turn } = m;
  return structuredClone(turn);
}

export function conversationOf(tape: Tape, rec: ReconstructedRun): Conversation {
  if (!rec.input || rec.input.length === 0) return { gap: 'no_input' };
  if (rec.output === null) return { gap: 'no_output' };
  const answered = llmSteps(tape.steps).filter((s) => s.status !== 'error' && messagesOf(s.response));
  const last = answered[answered.length - 1];
  const answer = (messagesOf(last.response) ?? []).map(asTurn);
  const lastRequest = messagesOf(last.request);
  if (lastRequest && startsWith(lastRequest, rec.input))
    return { messages: [...structuredClone(lastRequest), ...answer] };

  const messages = structuredClone(rec.input);
  const pool = [...rec.tool_calls];
  for (const [k, step] of answered.entries()) {
    if (k > 0) messages.push(...newUserTurns(messagesOf(step.request) ?? [], rec.input));
    for (const m of messagesOf(step.response) ?? []) {
      messages.push(asTurn(m));
      for (const call of m.tool_calls ?? []) {
        const done = takeResult(pool, call);
        const id = call.id ?? done?.id;
        messages.push({
          role: 'tool',
          ...(id ? { tool_call_id: id } : {}),
          ...(done?.result == null ? {} : { content: done.result }),
        });
      }
    }
  }
  return { messages };
}

/** The user turns at the end of a request, after its last answer or tool result; none when they repeat the prompt. */
function newUserTurns(request: readonly Message[], prompt: readonly Message[]): Message[] {
  let from = request.length;
  while (from > 0 && request[from - 1].role !== 'assistant' && request[from - 1].role !== 'tool') from--;
  const turns = request.slice(from).filter((m) => m.role === 'user');
  const asked = prompt.filter((m) => m.role === 'user');
  if (turns.length === asked.length && turns.every((m, i) => sameJson(m, asked[i]))) return [];
  return structuredClone(turns);
}

function startsWith(list: readonly Message[], prefix: readonly Message[]): boolean {
  return list.length > prefix.length && prefix.every((m, i) => sameJson(m, list[i]));
}

/** The reconstructed call that answered `call`: same id, else the first unused one of that tool. */
function takeResult(pool: ReconstructedToolCall[], call: ToolCall): ReconstructedToolCall | undefined {
  let i = call.id ? pool.findIndex((c) => c.id === call.id) : -1;
  if (i < 0) i = pool.findIndex((c) => c.name === call.name && (!call.id || c.id === null));
  return i < 0 ? undefined : pool.splice(i, 1)[0];
}
