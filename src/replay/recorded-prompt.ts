/**
 * @module replay/recorded-prompt
 * A model step's recorded request, read into canonical messages the same way an agent's
 * request is, so both sides compare by what they said. The reference offload wrote is resolved
 * first: the tail of [system…, ref] stands for a list of messages and is spliced in place (a
 * system message recorded beside an offloaded message list combines with it as it would have
 * inline).
 *
 * A prompt that is not a message list cannot be compared: a bare text, a JSON object (a whole
 * request body, even one that reads like a message), or a list holding a non-message.
 */
import type { Message } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import { normalizeMessages } from './canonical-messages.js';
import { storedReferenceOf } from '../payloads/stored-reference.js';
import { type PayloadReader, UnreadableValue } from './payload-refs.js';

export type RecordedPrompt = { kind: 'messages'; messages: Message[] } | { kind: 'not_messages'; why: string };

export async function readRecordedPrompt(request: JsonValue | null, reader: PayloadReader): Promise<RecordedPrompt> {
  try {
    return await readPrompt(request, reader);
  } catch (err) {
    if (err instanceof UnreadableValue)
      return { kind: 'not_messages', why: `its offloaded prompt ${err.message.replace(/^payload \S+ /, '')}` };
    throw err;
  }
}

async function readPrompt(request: JsonValue | null, reader: PayloadReader): Promise<RecordedPrompt> {
  if (request === null) return { kind: 'not_messages', why: 'its prompt was not recorded' };
  const at = storedReferenceOf(request);
  let list: JsonValue = request;
  if (at !== null && at.head === null) list = await reader.value(at.ref);
  const where = at !== null && at.head === null ? ' (offloaded)' : '';
  if (typeof list === 'string') return { kind: 'not_messages', why: `its prompt was recorded as bare text${where}` };
  if (!Array.isArray(list))
    return { kind: 'not_messages', why: `its prompt was recorded as a JSON object${where}, not a message list` };

  let elements: JsonValue[] = list;
  if (at !== null && at.head !== null) {
    // the offloaded tail stands for a message list (gen_ai.input.messages beside
    // gen_ai.system_instructions); text or an object there is a bare prompt, even one that reads like a message
    const v = await reader.value(at.ref);
    if (!Array.isArray(v))
      return {
        kind: 'not_messages',
        why: `its prompt holds an offloaded ${typeof v === 'string' ? 'bare text' : 'JSON value'} where a message list belongs`,
      };
    elements = [...at.head, ...v];
  }
  const result = normalizeMessages(elements);
  if (!result.ok)
    return {
      kind: 'not_messages',
      why: `element ${result.index} of its prompt is not a message (no role, content, tool call or tool result)`,
    };
  return { kind: 'messages', messages: result.messages };
}
