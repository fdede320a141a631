/**
 * @module normalize/vertexai-call-ids
 * Vertex AI has no tool-call ids (its function responses line up with its calls by position),
 * so the OTel contrib vertexai instrumentation makes them up in event mode (utils.py):
 * `{name}_{index}` for the answer's calls (gen_ai.choice tool_calls, index = the part's) and
 * for each tool result in the history (gen_ai.tool.message id), but the model's earlier turns
 * (gen_ai.assistant.message, the Content's parts) go out without them. Giving those calls the
 * id the instrumentation gave them when they were the answer makes the history's calls and
 * results pair up by id, as they do in the other layouts, and the history's call equal the
 * earlier step's answer.
 */
import type { JsonValue } from '../json/json-value.js';
import { asObject } from './attrs.js';

/** The instrumentation's gen_ai.system (GenAiSystemValues.VERTEX_AI), before latest semconv. */
export const VERTEX_AI_SYSTEM = 'vertex_ai';

/**
 * A model message body {role, content: [parts]} with `{name}_{part index}` on each
 * function_call lacking an id, while every part before it is a call too. The instrumentation
 * numbers a tool result by its place among the function responses, and an answer's call by
 * its place among all the parts: the two agree only while the calls come first. Past a text
 * or thought part they would name another call's result, so those calls get no id.
 */
export function withVertexAiCallIds(body: { [k: string]: JsonValue }): { [k: string]: JsonValue } {
  if (!Array.isArray(body.content)) return body;
  let leading = true;
  const content = body.content.map((raw, idx) => {
    const part = asObject(raw);
    const key =
      part &&
      (part.function_call !== undefined
        ? 'function_call'
        : part.functionCall !== undefined
          ? 'functionCall'
          : undefined);
    const call = key ? asObject(part![key]) : undefined;
    leading &&= call !== undefined;
    if (!leading || !call || call.id !== undefined || typeof call.name !== 'string') return raw;
    return { ...part!, [key!]: { ...call, id: `${call.name}_${idx}` } };
  });
  return { ...body, content };
}
