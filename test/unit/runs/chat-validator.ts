/**
 * Test helper: a chat fine-tuning format check, written independently of the exporter's own
 * (src/runs/chat-format.ts checkChatOrder) so the export is checked, not restated: valid
 * JSON, `{"messages": [...]}` only, system messages first, then a user turn; turns of one
 * role may follow each other (OpenAI's chat format allows it); an assistant's tool calls (type function, JSON-string
 * arguments, distinct ids) are each answered once by the tool messages right after it; the
 * last message is an assistant answer.
 */
/** Why a line is not a valid chat fine-tuning example, or null. Deliberately separate from src/runs/chat-format.ts. */
export function validChatLine(line: string): string | null {
  let value: any; // a line of test data of a known shape
  try {
    value = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  if (!value || typeof value !== 'object' || Object.keys(value).join() !== 'messages' || !Array.isArray(value.messages))
    return 'not {"messages": [...]}';
  const ms: any[] = value.messages;
  let i = 0;
  while (ms[i]?.role === 'system') i++;
  if (ms[i]?.role !== 'user') return 'no user turn after the system messages';
  for (; i < ms.length; i++) {
    const m = ms[i];
    if (m.role === 'user') {
      if (typeof m.content !== 'string' || !m.content) return `bad user turn ${i}`;
    } else if (m.role === 'assistant') {
      if (!m.tool_calls) {
        if (typeof m.content !== 'string' || !m.content) return `empty answer ${i}`;
        continue;
      }
      const open = new Set<string>();
      for (const c of m.tool_calls) {
        if (typeof c.id !== 'string' || c.type !== 'function' || typeof c.function?.name !== 'string')
          return `bad tool call at ${i}`;
        try {
          JSON.parse(c.function.arguments);
        } catch {
          return `arguments not a JSON string at ${i}`;
        }
        if (open.has(c.id)) return `repeated id at ${i}`;
        open.add(c.id);
      }
      while (ms[i + 1]?.role === 'tool') {
        const t = ms[++i];
        if (typeof t.content !== 'string' || !open.delete(t.tool_call_id))
          return `tool message ${i} references no open call`;
      }
      if (open.size) return `unanswered tool calls at ${i}`;
    } else return `unexpected ${m.role} at ${i}`;
  }
  const end = ms[ms.length - 1];
  return end.role === 'assistant' && !end.tool_calls ? null : 'does not end with an answer';
}
