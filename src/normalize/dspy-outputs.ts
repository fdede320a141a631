/**
 * @module normalize/dspy-outputs
 * What dspy.LM.__call__ / acall return, as openinference-instrumentation-dspy records it in
 * output.value (safe_json_dumps of the return value): a list of outputs, one per choice. Text-only
 * answers are plain strings (the instrumentation also writes those as flattened output
 * messages); as soon as one answer carries more (dspy/clients/base_lm.py _process_completion /
 * _process_response) every output is an object {text, reasoning_content?, tool_calls?,
 * logprobs?, citations?}, which has no flattened form, so the answer is read from here.
 */
import type { Message, ToolCall } from './step.js';
import type { JsonValue } from '../json/json-value.js';
import { asObject } from './attrs.js';
import { makeMessage, makeToolCall } from './messages.js';
import { providerToolCall } from './provider-messages.js';
import { readPythonLiteral } from './python-literal.js';

const OUTPUT_KEYS = new Set(['text', 'reasoning_content', 'tool_calls', 'logprobs', 'citations']);

/** A list of DSPy output objects: every item an object with `text` and only DSPy's keys. */
export function isDspyOutputs(body: JsonValue | undefined): body is JsonValue[] {
  return (
    Array.isArray(body) &&
    body.length > 0 &&
    body.every((o) => {
      const out = asObject(o);
      return out !== undefined && 'text' in out && Object.keys(out).every((k) => OUTPUT_KEYS.has(k));
    })
  );
}

/** One assistant message per output: the reasoning before the text, and the calls it made. */
export function messagesFromDspyOutputs(outputs: JsonValue[]): Message[] {
  return outputs.map((o) => {
    const out = asObject(o)!;
    const reasoning =
      typeof out.reasoning_content === 'string' && out.reasoning_content !== ''
        ? [{ type: 'reasoning', text: out.reasoning_content }]
        : [];
    const text = typeof out.text === 'string' && out.text !== '' ? out.text : undefined;
    const content =
      reasoning.length > 0 ? [...reasoning, ...(text !== undefined ? [{ type: 'text', text }] : [])] : text;
    const calls = Array.isArray(out.tool_calls) ? out.tool_calls.map(dspyToolCall) : [];
    return makeMessage({ role: 'assistant', content, toolCalls: calls });
  });
}

/**
 * A tool call as it reaches output.value: a Responses API function_call item (model_dump():
 * the call's id is call_id, `id` the item's), or a chat completion's LiteLLM tool call, which
 * safe_json_dumps (openinference-instrumentation helpers.py: json.dumps(obj, default=str,
 * ensure_ascii=False)) writes as the pydantic model's str():
 * `function=Function(arguments='{"city":"Paris"}', name='get_weather') id='call_1' type='function'`.
 */
function dspyToolCall(raw: JsonValue): ToolCall | undefined {
  const item = asObject(raw);
  if (item?.type === 'function_call') return makeToolCall(item.call_id ?? item.id, item.name, item.arguments);
  if (item) return providerToolCall(item);
  if (typeof raw !== 'string') return undefined;
  const m = TOOL_CALL_STR.exec(raw);
  return m ? makeToolCall(pythonString(m[3]), pythonString(m[2]), pythonString(m[1])) : undefined;
}

/** str() of LiteLLM's ChatCompletionMessageToolCall; the quoted values are Python string literals. */
const TOOL_CALL_STR =
  /^function=Function\(arguments=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*"), name=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")\) id=('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")/s;

/** The value of a quoted Python string literal (its escapes undone). */
function pythonString(literal: string): string {
  const list = readPythonLiteral(`[${literal}]`);
  return Array.isArray(list) && typeof list[0] === 'string' ? list[0] : literal.slice(1, -1);
}
