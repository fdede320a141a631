/**
 * @module normalize/request-options
 * What a model request offers beside its messages: the tools, `tool_choice` and
 * `response_format`, read from whichever place a layout recorded them (a provider request
 * body or OpenInference's llm.invocation_parameters, gen_ai.tool.definitions, OpenInference's
 * llm.tools.N.tool.json_schema, the AI SDK's ai.prompt.tools / ai.prompt.toolChoice,
 * Traceloop's llm.request.functions.N.*), in one canonical shape (docs/api.md "Canonical
 * request"):
 * - a function tool is {name, description?, parameters?} (OpenAI's `function.parameters`,
 *   Anthropic's `input_schema`); any other tool (a provider's built-in one) is kept as recorded;
 * - `tool_choice` is "auto", "none", "required" (Anthropic's "any") or {name} (one tool);
 * - `response_format` is kept as recorded.
 * They are kept in the step's params under those keys, and the request digest covers them
 * with the messages (requestIdentity), so two calls offering different tools differ.
 */
import type { Attributes } from '../spans/span-record.js';
import { asObject, indexedGroups, jsonAttr, str } from './attrs.js';
import type { JsonValue } from '../json/json-value.js';

type Obj = { [k: string]: JsonValue };

export const REQUEST_OPTION_KEYS = ['tools', 'tool_choice', 'response_format'] as const;
export type RequestOptions = { tools?: JsonValue[]; tool_choice?: JsonValue; response_format?: JsonValue };

/** One tool definition in its canonical shape. */
export function canonicalTool(v: JsonValue): JsonValue {
  const t = asObject(v);
  if (!t) return v;
  const fn = asObject(t.function) ?? (t.type === 'function' || t.type === undefined ? t : undefined);
  if (!fn || typeof fn.name !== 'string' || fn.name === '') return v;
  const out: Obj = { name: fn.name };
  if (typeof fn.description === 'string' && fn.description !== '') out.description = fn.description;
  const parameters = fn.parameters ?? fn.input_schema ?? fn.inputSchema;
  const schema = typeof parameters === 'string' ? (jsonAttr(parameters) ?? parameters) : parameters;
  if (schema !== undefined && schema !== null) out.parameters = schema;
  return out;
}

export function canonicalTools(v: JsonValue | undefined): JsonValue[] | undefined {
  if (!Array.isArray(v) || v.length === 0) return undefined;
  return v.map((t) => canonicalTool(typeof t === 'string' ? (jsonAttr(t) ?? t) : t));
}

/** OpenAI's and Anthropic's spellings of tool_choice, as one. */
export function canonicalToolChoice(v: JsonValue | undefined): JsonValue | undefined {
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v === 'string') return v === 'any' ? 'required' : v;
  const c = asObject(v);
  if (!c) return v;
  const named = asObject(c.function)?.name ?? c.name ?? c.toolName;
  if (typeof named === 'string' && (c.type === 'function' || c.type === 'tool')) return { name: named };
  if (c.type === 'any') return 'required';
  if (c.type === 'auto' || c.type === 'none' || c.type === 'required') return c.type;
  return v;
}

/** The options a provider request body (or OpenInference's invocation parameters) carries. */
export function optionsFromBody(body: JsonValue | undefined): RequestOptions {
  const b = asObject(body);
  if (!b) return {};
  return clean({
    tools: canonicalTools(b.tools ?? b.functions),
    tool_choice: canonicalToolChoice(b.tool_choice ?? b.function_call),
    response_format: b.response_format ?? undefined,
  });
}

/** The options a span's attributes carry, in any of the layouts that record them. */
export function optionsFromAttributes(attrs: Attributes): RequestOptions {
  const genAi = jsonAttr(attrs['gen_ai.tool.definitions']);
  let tools = canonicalTools(genAi);
  tools ??= canonicalTools(indexedGroups(attrs, 'llm.tools.').map((g) => (g['tool.json_schema'] ?? null) as JsonValue));
  const aiSdk = attrs['ai.prompt.tools'];
  tools ??= canonicalTools(Array.isArray(aiSdk) ? (aiSdk as JsonValue[]) : jsonAttr(aiSdk));
  tools ??= canonicalTools(
    indexedGroups(attrs, 'llm.request.functions.').map((g) => {
      const f = g as Obj;
      return { type: 'function', function: { name: f.name, description: f.description, parameters: f.parameters } };
    }) as JsonValue[],
  );
  return clean({
    tools,
    tool_choice: canonicalToolChoice(
      jsonAttr(attrs['ai.prompt.toolChoice']) ?? str(attrs['gen_ai.request.tool_choice']) ?? undefined,
    ),
  });
}

/**
 * A model step's params with its request options in canonical shape: those found in
 * `found` (earlier sources first) replace any raw spelling a layout put among the params.
 */
export function withRequestOptions(params: Obj, ...found: RequestOptions[]): Obj {
  const out: Obj = { ...params };
  for (const key of REQUEST_OPTION_KEYS) {
    delete out[key];
    const raw = params[key];
    const value =
      found.map((f) => f[key]).find((v) => v !== undefined) ??
      (key === 'tools' ? canonicalTools(raw) : key === 'tool_choice' ? canonicalToolChoice(raw) : (raw ?? undefined));
    if (value !== undefined && value !== null) out[key] = value;
  }
  return out;
}

/** The request options among a step's params (canonical, as withRequestOptions left them). */
export function requestOptionsOf(params: { [k: string]: JsonValue } | null | undefined): RequestOptions {
  const out: RequestOptions = {};
  if (!params) return out;
  if (Array.isArray(params.tools)) out.tools = params.tools;
  if (params.tool_choice !== undefined) out.tool_choice = params.tool_choice;
  if (params.response_format !== undefined) out.response_format = params.response_format;
  return out;
}

/**
 * What a model step's request digest is of: its messages alone when it recorded no request
 * options (so a layout that does not record them digests the messages as before), else
 * {messages, tools?, tool_choice?, response_format?}.
 */
export function requestIdentity(request: JsonValue, options: RequestOptions): JsonValue {
  const present = REQUEST_OPTION_KEYS.filter((k) => options[k] !== undefined);
  if (present.length === 0) return request;
  const out: Obj = { messages: request };
  for (const k of present) out[k] = options[k] as JsonValue;
  return out;
}

function clean(o: RequestOptions): RequestOptions {
  const out: RequestOptions = {};
  for (const k of REQUEST_OPTION_KEYS) if (o[k] !== undefined && o[k] !== null) (out as Obj)[k] = o[k] as JsonValue;
  return out;
}
