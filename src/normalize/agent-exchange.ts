/**
 * @module normalize/agent-exchange
 * One canonical request and response for agent steps, whichever dialect read them
 * (docs/architecture.md "Steps"). Layouts record an agent invocation differently: OTel GenAI
 * as message lists with the system instructions (and sometimes the conversation so far),
 * OpenInference as the bare input text, OpenLLMetry as the decorated function's arguments. The
 * same invocation must digest equally in all of them, so:
 * - the request is the messages the agent was invoked with: bare text is one user message; of
 *   a message list, the turns after its last assistant message (what this invocation added);
 * - system messages and the earlier turns are configuration, kept in params as
 *   `instructions` and `history` (shown on the tape, outside the request digest);
 * - an input that recorded nothing (no arguments, an empty list) is not recorded: null;
 * - the response is what the agent answered as assistant messages, without a finish reason
 *   (that belongs to the model call that wrote the answer, its own llm step, and not every
 *   layout records it for the agent);
 * - a structured value that is not messages stays as recorded.
 */
import type { JsonValue } from '../json/json-value.js';
import type { Message, StepDraft } from './step.js';
import { asObject, readJsonShaped } from './attrs.js';
import { fromProviderMessages } from './provider-messages.js';

const CANONICAL_KEYS = new Set(['role', 'content', 'tool_call_id', 'tool_calls', 'finish_reason']);
const CANONICAL_ROLES = new Set(['system', 'user', 'assistant', 'tool']);

/** A list of messages: canonical ones as they are, a provider's folded to canonical. */
function messagesOf(value: JsonValue[]): Message[] | undefined {
  if (!value.every((m) => typeof asObject(m)?.role === 'string')) return undefined;
  const canonical = value.every((m) => {
    const o = asObject(m) as { [k: string]: JsonValue };
    return CANONICAL_ROLES.has(o.role as string) && Object.keys(o).every((k) => CANONICAL_KEYS.has(k));
  });
  return canonical ? (value as unknown as Message[]) : fromProviderMessages(value);
}

function isEmpty(value: JsonValue): boolean {
  if (Array.isArray(value)) return value.length === 0;
  const o = asObject(value);
  return o !== undefined && Object.keys(o).length === 0;
}

interface AgentRequest {
  request: JsonValue | null;
  instructions: Message[];
  history: Message[];
}

/**
 * Text kept as recorded that is the JSON of a message list (an SDK's entity input or output)
 * is that list: the messages are the agent's exchange, not a text turn.
 */
function messagesInText(value: JsonValue | null): JsonValue | null {
  if (typeof value !== 'string') return value;
  const parsed = readJsonShaped(value);
  return Array.isArray(parsed) && parsed.length > 0 && messagesOf(parsed) !== undefined ? parsed : value;
}

function agentRequest(recorded: JsonValue | null): AgentRequest {
  const value = messagesInText(recorded);
  const none: AgentRequest = { request: null, instructions: [], history: [] };
  if (value === null || isEmpty(value)) return none;
  if (typeof value === 'string') return { ...none, request: [{ role: 'user', content: value }] };
  const messages = Array.isArray(value) ? messagesOf(value) : undefined;
  if (messages === undefined) return { ...none, request: value };
  const instructions = messages.filter((m) => m.role === 'system');
  const turns = messages.filter((m) => m.role !== 'system');
  let lastAnswer = -1;
  for (let i = 0; i < turns.length; i++) if (turns[i].role === 'assistant') lastAnswer = i;
  // A list ending with an answer has no new turn to split off: all of it is the input.
  const split = lastAnswer === turns.length - 1 ? 0 : lastAnswer + 1;
  const input = turns.slice(split);
  return {
    request: input.length > 0 ? (input as unknown as JsonValue) : null,
    instructions,
    history: turns.slice(0, split),
  };
}

function agentResponse(recorded: JsonValue | null): JsonValue | null {
  const value = messagesInText(recorded);
  if (value === null || isEmpty(value)) return null;
  if (typeof value === 'string') return [{ role: 'assistant', content: value }];
  const messages = Array.isArray(value) ? messagesOf(value) : undefined;
  if (messages === undefined) return value;
  const answer = messages.map(({ finish_reason: _, ...m }) => m);
  return answer as unknown as JsonValue;
}

/** An agent step with its request and response in canonical shape; other steps as they are. */
export function canonicalAgentStep(draft: StepDraft | null): StepDraft | null {
  if (draft?.kind !== 'agent') return draft;
  const { request, instructions, history } = agentRequest(draft.request);
  draft.request = request;
  draft.response = agentResponse(draft.response);
  if (instructions.length > 0) draft.params = { ...draft.params, instructions: instructions as unknown as JsonValue };
  if (history.length > 0) draft.params = { ...draft.params, history: history as unknown as JsonValue };
  return draft;
}
