/**
 * @module replay/request-shapes
 * An agent's request body, OpenAI chat completions or Anthropic messages, read into what a
 * replay needs: the canonical messages (for strict matching), the requested model, and how
 * the answer must be rendered (stream, usage chunk).
 */
import type { Message } from '../normalize/step.js';
import { isObject, normalizeContent, normalizeMessages } from './canonical-messages.js';
import { ReplayError } from './errors.js';

export type Wire = 'openai' | 'anthropic';

export interface AgentRequest {
  wire: Wire;
  messages: Message[];
  /** the model the agent asked for, when it is a usable name */
  model: string | null;
  stream: boolean;
  /** OpenAI stream_options.include_usage */
  includeUsage: boolean;
}

/** Names over this many bytes count as absent: a stream repeats them in every chunk. */
export const MAX_NAME_BYTES = 256;

export function usableName(v: unknown): string | null {
  if (typeof v !== 'string' || v === '') return null;
  return Buffer.byteLength(v) > MAX_NAME_BYTES ? null : v;
}

function invalid(message: string): ReplayError {
  return new ReplayError(400, 'invalid_request', message);
}

function messagesOf(list: unknown, wire: Wire): Message[] {
  if (!Array.isArray(list)) throw invalid(`the ${wire} request has no "messages" array`);
  const result = normalizeMessages(list);
  if (!result.ok) throw invalid(`messages[${result.index}] is not a message (no role, content, tool call or tool result)`);
  return result.messages;
}

export function readOpenAiRequest(body: unknown): AgentRequest {
  if (!isObject(body)) throw invalid('the request body is not a JSON object');
  const options = isObject(body.stream_options) ? body.stream_options : {};
  return {
    wire: 'openai',
    messages: messagesOf(body.messages, 'openai'),
    model: usableName(body.model),
    stream: body.stream === true,
    includeUsage: options.include_usage === true,
  };
}

/** The Anthropic `system` parameter is a leading system message; an empty one is no message. */
export function readAnthropicRequest(body: unknown): AgentRequest {
  if (!isObject(body)) throw invalid('the request body is not a JSON object');
  const messages = messagesOf(body.messages, 'anthropic');
  const system = normalizeContent(body.system);
  if (system !== undefined) messages.unshift({ role: 'system', content: system });
  return {
    wire: 'anthropic',
    messages,
    model: usableName(body.model),
    stream: body.stream === true,
    includeUsage: false,
  };
}
