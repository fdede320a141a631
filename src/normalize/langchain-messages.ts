/**
 * @module normalize/langchain-messages
 * LangChain messages as LangChain and its tracers serialise them → canonical messages:
 * - `to_json()` / `dumpd()`: {lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs: {content,
 *   tool_calls, tool_call_id, additional_kwargs, response_metadata, ...}} (chat-model run inputs,
 *   LLMResult generations);
 * - pydantic `model_dump()`: {type: "ai" | "human" | "system" | "tool", content, tool_calls,
 *   tool_call_id, ...} (what openinference-instrumentation-langchain's JSON encoder writes for a
 *   message object, e.g. the ToolMessage a tool returned).
 * Used for OpenInference LangChain input.value / output.value bodies.
 */
import type { Message } from './step.js';
import type { JsonValue } from '../json/json-value.js';
import { asObject } from './attrs.js';
import { fromProviderMessage } from './provider-messages.js';

type Obj = { [k: string]: JsonValue };

const CLASS_ROLES: [string, string][] = [
  ['HumanMessage', 'user'],
  ['AIMessage', 'assistant'],
  ['SystemMessage', 'system'],
  ['ToolMessage', 'tool'],
  ['FunctionMessage', 'tool'],
];
const TYPE_ROLES: Record<string, string> = {
  human: 'user',
  ai: 'assistant',
  system: 'system',
  tool: 'tool',
  function: 'tool',
};

/** The fields of a LangChain message and its role, or undefined when v is not one. */
function langChainFields(v: unknown): { role: string; f: Obj } | undefined {
  const o = asObject(v);
  if (!o) return undefined;
  if (o.lc !== undefined && o.type === 'constructor' && Array.isArray(o.id)) {
    const f = asObject(o.kwargs);
    const cls = String(o.id[o.id.length - 1] ?? '');
    if (!f) return undefined;
    if (cls.startsWith('ChatMessage')) return typeof f.role === 'string' ? { role: f.role, f } : undefined;
    const role = CLASS_ROLES.find(([prefix]) => cls.startsWith(prefix))?.[1];
    return role ? { role, f } : undefined;
  }
  // model_dump(): no role key, a message `type` and `content`
  if (o.role === undefined && typeof o.type === 'string' && 'content' in o) {
    const role = TYPE_ROLES[o.type];
    return role ? { role, f: o } : undefined;
  }
  return undefined;
}

export function isLangChainMessage(v: unknown): boolean {
  return langChainFields(v) !== undefined;
}

/**
 * One LangChain message → canonical messages (the finish reason only when given: a message in a
 * request's history carries none). Tool calls come from `tool_calls` (LangChain's own
 * {name, args, id}), else additional_kwargs (the provider's); Anthropic tool_use blocks in the
 * content repeat the tool calls and are dropped when tool_calls say the same.
 */
export function fromLangChainMessage(v: unknown, finishReason?: unknown): Message[] {
  const lc = langChainFields(v);
  if (!lc) return [];
  const { role, f } = lc;
  const extra = asObject(f.additional_kwargs);
  const ownCalls = Array.isArray(f.tool_calls) && f.tool_calls.length ? f.tool_calls : undefined;
  const toolCalls = ownCalls ?? (Array.isArray(extra?.tool_calls) ? extra?.tool_calls : undefined);
  let content: JsonValue | undefined = f.content;
  if (Array.isArray(content)) {
    content = content
      .map((p) => (typeof p === 'string' ? { type: 'text', text: p } : p))
      .filter((p) => !(toolCalls && asObject(p)?.type === 'tool_use'));
  }
  return fromProviderMessage(
    {
      role,
      content,
      tool_calls: toolCalls,
      tool_call_id: f.tool_call_id,
      function_call: extra?.function_call,
    },
    finishReason,
  );
}

/** The stop reason a model answer's response_metadata carries (OpenAI, Anthropic, Bedrock). */
function answerFinishReason(message: unknown): JsonValue | undefined {
  const meta = asObject(langChainFields(message)?.f.response_metadata);
  return meta?.finish_reason ?? meta?.stop_reason ?? meta?.stopReason;
}

/**
 * A LangChain chat-model run's inputs {"messages": [[message, ...], ...]} (one list per prompt
 * in the batch; the first is read, as the flattened keys do) → canonical messages, or undefined
 * when the list holds no LangChain message.
 */
export function messagesFromLangChainInputs(messages: JsonValue[]): Message[] | undefined {
  const first = Array.isArray(messages[0]) ? messages[0] : messages;
  if (!first.some(isLangChainMessage)) return undefined;
  return first.flatMap((m) => (isLangChainMessage(m) ? fromLangChainMessage(m) : fromProviderMessage(m)));
}

/**
 * The model that answered, as a LangChain LLMResult records it: the first answer's
 * response_metadata (model_name from OpenAI, model from Anthropic), else llm_output.model_name.
 * LangChain's own llm.model_name is the model asked for (`gpt-4o-mini`), this the one that
 * answered (`gpt-4o-mini-2024-07-18`), which the other layouts record.
 */
export function langChainResponseModel(body: JsonValue | undefined): string | undefined {
  const result = asObject(body);
  const gens = Array.isArray(result?.generations) ? result!.generations[0] : undefined;
  const first = Array.isArray(gens) ? asObject(gens[0]) : undefined;
  const meta = asObject(langChainFields(first?.message)?.f.response_metadata);
  const model = meta?.model_name ?? meta?.model ?? asObject(result?.llm_output)?.model_name;
  return typeof model === 'string' && model !== '' ? model : undefined;
}

/**
 * A LangChain LLMResult {"generations": [[{text, generation_info, message}, ...]], llm_output}
 * → the answers of the first prompt; the finish reason from generation_info, else the message's
 * response_metadata. A completion generation without a message is its text.
 */
export function messagesFromLangChainResult(body: Obj): Message[] | undefined {
  const gens = Array.isArray(body.generations) ? body.generations[0] : undefined;
  if (!Array.isArray(gens)) return undefined;
  const out: Message[] = [];
  for (const g of gens) {
    const gen = asObject(g);
    if (!gen) continue;
    const finish = asObject(gen.generation_info)?.finish_reason ?? answerFinishReason(gen.message);
    if (gen.message !== undefined && isLangChainMessage(gen.message))
      out.push(...fromLangChainMessage(gen.message, finish));
    else out.push(...fromProviderMessage({ role: 'assistant', content: gen.text ?? null }, finish));
  }
  return out;
}

/** A tool's result when it returned a LangChain ToolMessage: its content and tool call id. */
export function langChainToolResult(
  v: unknown,
): { content: JsonValue | undefined; toolCallId: string | undefined } | undefined {
  const lc = langChainFields(v);
  if (lc?.role !== 'tool') return undefined;
  const id = lc.f.tool_call_id;
  return { content: lc.f.content, toolCallId: typeof id === 'string' && id !== '' ? id : undefined };
}
