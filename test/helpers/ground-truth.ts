/**
 * Test helper: what a capture's ground truth says each step should normalize to, written
 * independently of src/normalize (a second, deliberately plain reading of the provider
 * wire shapes), so the corpus tests check the normalizer instead of restating it.
 */
import type { GroundTruthStep } from './corpus.js';

type J = any; // ground-truth.json is test data of a known shape

const FINISH: Record<string, string> = {
  end_turn: 'stop',
  stop_sequence: 'stop',
  tool_use: 'tool_calls',
  max_tokens: 'length',
};

/** Text that parses as a JSON object or array is read as JSON. */
function jsonShaped(text: string): J {
  try {
    const v = JSON.parse(text);
    return v !== null && typeof v === 'object' ? v : text;
  } catch {
    return text;
  }
}

function content(v: J): J {
  if (v === null || v === undefined || v === '') return undefined;
  if (typeof v === 'string') return jsonShaped(v);
  if (Array.isArray(v) && v.every((b) => b.type === 'text')) return content(v.map((b) => b.text).join(''));
  return v;
}

function msg(
  role: string,
  fields: { content?: J; tool_calls?: J[]; tool_call_id?: string; finish_reason?: string },
): J {
  const m: J = { role };
  const c = content(fields.content);
  if (c !== undefined) m.content = c;
  if (fields.tool_call_id) m.tool_call_id = fields.tool_call_id;
  if (fields.tool_calls?.length) m.tool_calls = fields.tool_calls;
  if (fields.finish_reason) m.finish_reason = FINISH[fields.finish_reason] ?? fields.finish_reason;
  return m;
}

function openAiCalls(calls: J[] | undefined): J[] {
  return (calls ?? []).map((c) => ({ id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) }));
}

function openAiMessage(m: J, finish?: string): J {
  const role = m.role === 'developer' ? 'system' : m.role;
  return msg(role, {
    content: m.content,
    tool_calls: openAiCalls(m.tool_calls),
    tool_call_id: m.tool_call_id,
    finish_reason: finish,
  });
}

/** Anthropic blocks: text joined, tool_use → tool_calls, each tool_result → its own tool message. */
function anthropicMessages(role: string, blocks: J, finish?: string): J[] {
  if (typeof blocks === 'string') return [msg(role, { content: blocks, finish_reason: finish })];
  const results = blocks.filter((b: J) => b.type === 'tool_result');
  if (results.length) return results.map((b: J) => msg('tool', { content: b.content, tool_call_id: b.tool_use_id }));
  const text = blocks
    .filter((b: J) => b.type === 'text')
    .map((b: J) => b.text)
    .join('');
  const calls = blocks
    .filter((b: J) => b.type === 'tool_use')
    .map((b: J) => ({ id: b.id, name: b.name, arguments: b.input }));
  return [msg(role, { content: text, tool_calls: calls, finish_reason: finish })];
}

export function expectedRequest(step: GroundTruthStep): J[] {
  const req = step.request as J;
  if (step.provider === 'anthropic') {
    const system = req.system ? [msg('system', { content: req.system })] : [];
    return [...system, ...req.messages.flatMap((m: J) => anthropicMessages(m.role, m.content))];
  }
  return req.messages.map((m: J) => openAiMessage(m));
}

/** The answer, or null when the call failed (no response was recorded). */
export function expectedResponse(step: GroundTruthStep): J[] | null {
  const res = step.response as J;
  if (!res) return null;
  if (step.provider === 'anthropic') return anthropicMessages('assistant', res.content, res.stop_reason);
  if (res.choices) return res.choices.map((c: J) => openAiMessage(c.message, c.finish_reason));
  return [openAiMessage(res.message, res.finish_reason)]; // streamed: the accumulated message
}
