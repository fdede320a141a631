/**
 * @module replay/stream-assembly
 * A provider's streamed answer folded back into the body it would have answered unstreamed,
 * so a fork records a live streamed call as it records a plain one (fork-spans.ts): OpenAI
 * chat.completion.chunk events into a ChatCompletion (text concatenated, tool calls joined by
 * index, finish reason, usage chunk), Anthropic message events into a Message (text blocks,
 * tool_use blocks from input_json_delta pieces, stop reason, usage). Events are read as
 * server-sent events; anything unparseable is skipped, since the agent got the bytes as sent.
 */
import type { Wire } from './request-shapes.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The JSON data of each event of an SSE text, in order. */
export function sseEvents(text: string): Obj[] {
  const events: Obj[] = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((line) => line.startsWith('data:'))
      .map((line) => line.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data === '' || data === '[DONE]') continue;
    try {
      const parsed: unknown = JSON.parse(data);
      if (isObj(parsed)) events.push(parsed);
    } catch {
      // not JSON: nothing to fold
    }
  }
  return events;
}

export function assembleStream(wire: Wire, text: string): Obj {
  return wire === 'openai' ? assembleOpenAi(sseEvents(text)) : assembleAnthropic(sseEvents(text));
}

function assembleOpenAi(events: Obj[]): Obj {
  const body: Obj = { object: 'chat.completion' };
  let content: string | null = null;
  let finish: unknown = null;
  const calls: { id?: unknown; type: string; function: { name: string; arguments: string } }[] = [];
  for (const e of events) {
    for (const key of ['id', 'created', 'model', 'system_fingerprint'])
      if (e[key] !== undefined && body[key] === undefined) body[key] = e[key];
    if (isObj(e.usage)) body.usage = e.usage;
    const choice = Array.isArray(e.choices) ? e.choices.find(isObj) : undefined;
    if (!choice) continue;
    if (choice.finish_reason) finish = choice.finish_reason;
    const delta = isObj(choice.delta) ? choice.delta : {};
    if (typeof delta.content === 'string') content = (content ?? '') + delta.content;
    for (const piece of Array.isArray(delta.tool_calls) ? delta.tool_calls.filter(isObj) : []) {
      const index = typeof piece.index === 'number' ? piece.index : calls.length;
      calls[index] ??= { type: 'function', function: { name: '', arguments: '' } };
      const call = calls[index];
      if (piece.id !== undefined) call.id = piece.id;
      const fn = isObj(piece.function) ? piece.function : {};
      if (typeof fn.name === 'string') call.function.name += fn.name;
      if (typeof fn.arguments === 'string') call.function.arguments += fn.arguments;
    }
  }
  const message: Obj = { role: 'assistant', content };
  const present = calls.filter(Boolean);
  if (present.length > 0) message.tool_calls = present;
  body.choices = [{ index: 0, message, finish_reason: finish }];
  return body;
}

function assembleAnthropic(events: Obj[]): Obj {
  let body: Obj = { type: 'message', role: 'assistant' };
  const blocks: Obj[] = [];
  const json: string[] = [];
  for (const e of events) {
    if (e.type === 'message_start' && isObj(e.message)) body = { ...e.message, type: 'message' };
    else if (e.type === 'content_block_start' && typeof e.index === 'number' && isObj(e.content_block)) {
      blocks[e.index] = { ...e.content_block };
      json[e.index] = '';
    } else if (e.type === 'content_block_delta' && typeof e.index === 'number' && isObj(e.delta)) {
      blocks[e.index] ??= { type: 'text', text: '' };
      const block = blocks[e.index];
      if (e.delta.type === 'text_delta' && typeof e.delta.text === 'string')
        block.text = `${typeof block.text === 'string' ? block.text : ''}${e.delta.text}`;
      if (e.delta.type === 'input_json_delta' && typeof e.delta.partial_json === 'string')
        json[e.index] = (json[e.index] ?? '') + e.delta.partial_json;
    } else if (e.type === 'message_delta') {
      if (isObj(e.delta)) Object.assign(body, e.delta);
      if (isObj(e.usage)) body.usage = { ...(isObj(body.usage) ? body.usage : {}), ...e.usage };
    }
  }
  blocks.forEach((block, i) => {
    if (block.type !== 'tool_use' || !json[i]) return;
    try {
      block.input = JSON.parse(json[i]);
    } catch {
      block.input = json[i];
    }
  });
  body.content = blocks.filter(Boolean);
  return body;
}
