/**
 * @module replay/request-shapes
 * An agent's request body, OpenAI chat completions or Anthropic messages, read into what a
 * replay needs: the canonical messages (for strict matching, read by the normalizer's own
 * provider reader, so they fold exactly as the recorded spans did), the requested model, and
 * how the answer must be rendered (stream, usage chunk).
 */
import type { JsonValue } from '../json/json-value.js';
import type { Message } from '../normalize/step.js';
import { optionsFromBody, type RequestOptions } from '../normalize/request-options.js';
import { isObject, requestBodyMessages } from './canonical-messages.js';
import { ApiError } from '../errors.js';

export type Wire = 'openai' | 'anthropic';

export interface AgentRequest {
  wire: Wire;
  messages: Message[];
  /** tools, tool_choice and response_format, in the normalizer's canonical shape */
  options: RequestOptions;
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

function invalid(message: string): ApiError {
  return new ApiError('bad_input', message);
}

/** The body's messages by the normalizer's provider reader (Anthropic `system` first); refuses a non-message. */
function messagesOf(body: Record<string, unknown>, wire: Wire): Message[] {
  const result = requestBodyMessages(body);
  if (result.ok) return result.messages;
  if (result.index === null) throw invalid(`the ${wire} request has no "messages" array`);
  throw invalid(`messages[${result.index}] is not a message (no role, content, tool call or tool result)`);
}

export function readOpenAiRequest(body: unknown): AgentRequest {
  if (!isObject(body)) throw invalid('the request body is not a JSON object');
  const options = isObject(body.stream_options) ? body.stream_options : {};
  return {
    wire: 'openai',
    messages: messagesOf(body, 'openai'),
    options: optionsFromBody(body as JsonValue),
    model: usableName(body.model),
    stream: body.stream === true,
    includeUsage: options.include_usage === true,
  };
}

/** The Anthropic `system` parameter is a leading system message; an empty one is no message. */
export function readAnthropicRequest(body: unknown): AgentRequest {
  if (!isObject(body)) throw invalid('the request body is not a JSON object');
  return {
    wire: 'anthropic',
    messages: messagesOf(body, 'anthropic'),
    options: optionsFromBody(body as JsonValue),
    model: usableName(body.model),
    stream: body.stream === true,
    includeUsage: false,
  };
}
