/**
 * @module mcp/render-tape
 * A tape as a few lines per step for a model to read: what each step was, how it went, and
 * a one-line preview of what went in and what came out. An llm step's input preview is its
 * newest message (the rest of the prompt repeats earlier steps); its output is the answer's
 * text and the tool calls it asked for. Previews are cut to a number of characters and say
 * how much was cut; an offloaded value the tape could not inline says so (only references
 * tapedeck wrote: payloads/stored-reference.ts).
 */
import type { JsonValue } from '../json/json-value.js';
import { storedReferenceOf } from '../payloads/stored-reference.js';
import type { Message, Step, Tape } from '../normalize/step.js';

export interface RenderTapeOptions {
  /** steps rendered, from the first */
  maxSteps: number;
  /** characters per preview */
  previewChars: number;
}

export function renderTape(tape: Tape, options: RenderTapeOptions): string {
  const shown = tape.steps.slice(0, options.maxSteps);
  const lines = [
    `run ${JSON.stringify(tape.run)}: ${tape.steps.length} steps from ${tape.spans_examined} spans` +
      `${tape.truncated ? ' (the run is longer: only its beginning was read)' : ''}`,
  ];
  for (const step of shown) {
    lines.push(headline(step));
    lines.push(`   in:  ${preview(inputOf(step), options.previewChars)}`);
    lines.push(`   out: ${preview(outputOf(step), options.previewChars)}`);
  }
  if (shown.length < tape.steps.length) {
    lines.push(`… ${tape.steps.length - shown.length} more steps not shown (raise max_steps to see them)`);
  }
  return lines.join('\n');
}

function headline(step: Step): string {
  const parts = [`#${step.index}`, step.kind, step.kind === 'tool' ? (step.tool ?? step.name) : step.name];
  if (step.model) parts.push(`model=${step.model}`);
  parts.push(`status=${step.status}`, `${Number(step.duration_ns / 1_000_000n)}ms`);
  if (step.tokens.input !== null || step.tokens.output !== null) {
    parts.push(`tokens in=${step.tokens.input ?? '?'} out=${step.tokens.output ?? '?'}`);
  }
  return parts.join(' ');
}

type Shown = string | null;

function inputOf(step: Step): Shown {
  const request = step.request;
  const at = storedReferenceOf(request);
  if (at?.head === null) return offloaded(at.ref);
  // model and agent steps hold messages (docs/architecture.md "Steps"); a tool's are its own values
  if (step.kind !== 'tool' && Array.isArray(request) && request.length > 0) {
    const last = request[request.length - 1];
    return `${request.length} messages, last ${at === null ? messageText(last) : offloaded(at.ref)}`;
  }
  return valueText(request);
}

function outputOf(step: Step): Shown {
  const response = step.response;
  const at = storedReferenceOf(response);
  if (at !== null) return offloaded(at.ref);
  if (step.kind !== 'tool' && Array.isArray(response)) return response.map(messageText).join(' | ');
  return valueText(response);
}

function messageText(value: JsonValue): string {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return valueText(value) ?? 'null';
  const message = value as unknown as Message;
  const parts: string[] = [];
  if (message.content !== undefined) parts.push(contentText(message.content));
  for (const call of message.tool_calls ?? []) {
    parts.push(`→ ${call.name}(${call.arguments === undefined ? '' : (valueText(call.arguments) ?? 'null')})`);
  }
  if (message.tool_call_id) parts.unshift(`[result of ${message.tool_call_id}]`);
  return `${message.role ?? '?'}: ${parts.join(' ')}`;
}

function contentText(content: JsonValue): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) =>
        typeof part === 'object' && part !== null && !Array.isArray(part) && typeof part.text === 'string'
          ? part.text
          : compact(part),
      )
      .join(' ');
  }
  return compact(content);
}

function valueText(value: JsonValue | null): Shown {
  if (value === null) return null;
  return typeof value === 'string' ? value : compact(value);
}

const offloaded = (ref: string) => `[offloaded ${ref}, not inlined]`;

function compact(value: JsonValue): string {
  return JSON.stringify(value) ?? 'null';
}

/** One line: newlines shown as ⏎, cut at maxChars (whole code points) saying how much was cut. */
export function preview(text: Shown, maxChars: number): string {
  if (text === null) return '(not recorded)';
  const chars = Array.from(text.replace(/\r?\n/g, ' ⏎ '));
  if (chars.length <= maxChars) return chars.join('');
  return `${chars.slice(0, maxChars).join('')}… (+${chars.length - maxChars} chars)`;
}
