/**
 * @module replay/render-common
 * What both wire renderers share: the fields a served answer takes from the recording (model,
 * ids, created time, usage), the ones invented where the recording has none, and a body that
 * refuses to grow past the response bound while it is rendered.
 */
import type { Tokens } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { renderJson } from '../json/canonical.js';
import type { Answer } from './answer.js';

/** Everything a renderer needs about one served step. */
export interface RenderInput {
  replayId: string;
  step: number;
  answer: Answer;
  tokens: Tokens;
  /** the step's recorded model (usable name) */
  stepModel: string | null;
  startNs: bigint;
  /** the model the agent asked for */
  requestModel: string | null;
  stream: boolean;
  includeUsage: boolean;
  maxBytes: number;
}

export interface Rendered {
  contentType: string;
  body: Buffer;
}

/** Thrown while rendering when the body would pass maxBytes. */
export class TooLarge extends Error {
  constructor(readonly limitBytes: number) {
    super(`the rendered response would exceed ${limitBytes} bytes`);
    this.name = 'TooLarge';
  }
}

export class BoundedBody {
  private readonly parts: string[] = [];
  private bytes = 0;

  constructor(private readonly maxBytes: number) {}

  push(text: string): void {
    const n = Buffer.byteLength(text);
    if (this.bytes + n > this.maxBytes) throw new TooLarge(this.maxBytes);
    this.bytes += n;
    this.parts.push(text);
  }

  json(value: unknown): void {
    this.push(renderJson(value));
  }

  toBuffer(): Buffer {
    return Buffer.from(this.parts.join(''), 'utf8');
  }
}

/** Twelve hex digits of the replay id: invented ids name the replay and the step. */
function idStem(input: RenderInput): string {
  return `tapedeck${input.replayId.replace(/^rp_/, '').slice(0, 12)}s${input.step}`;
}

export function responseIdFor(input: RenderInput, prefix: 'chatcmpl-' | 'msg_'): string {
  return input.answer.responseId ?? `${prefix}${idStem(input)}`;
}

export function toolCallIdFor(input: RenderInput, index: number, prefix: 'call_' | 'toolu_'): string {
  return input.answer.toolCalls[index].id ?? `${prefix}${idStem(input)}c${index}`;
}

export function modelFor(input: RenderInput): string {
  return input.answer.model ?? input.stepModel ?? input.requestModel ?? 'unknown';
}

export function createdFor(input: RenderInput): number {
  return input.answer.created ?? Number(input.startNs / 1_000_000_000n);
}

/** Tool-call arguments as the JSON string OpenAI carries: JSON values compact with sorted keys. */
export function argumentsText(args: JsonValue | undefined): string {
  if (args === undefined) return '{}';
  return typeof args === 'string' ? args : renderJson(args);
}

/** The finish reason, OpenAI vocabulary; an answer that asks for tools and recorded none finishes with tool_calls. */
export function finishFor(answer: Answer): string {
  return answer.finishReason ?? (answer.toolCalls.length > 0 ? 'tool_calls' : 'stop');
}

export function hasUsage(tokens: Tokens): boolean {
  return tokens.input !== null || tokens.output !== null;
}
