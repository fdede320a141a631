/**
 * A conversation as OTel GenAI spans: one model call per question, each resending the whole
 * history so far with the system instructions, as agents do. Runs that open with the same
 * question share messages in the message store.
 */
import { randomTraceId } from './tapedeck-server.js';
import { span } from './span-builder.js';

export interface ConversationInit {
  run: string;
  system: string;
  /** the user's question at each call, in order */
  questions: readonly string[];
  /** the assistant's answer at call i */
  answer: (i: number) => string;
}

const textMessage = (role: string, content: string) => ({ role, parts: [{ type: 'text', content }] });

export function conversationSpans({ run, system, questions, answer }: ConversationInit) {
  const traceId = randomTraceId();
  const history: ReturnType<typeof textMessage>[] = [];
  return questions.map((question, i) => {
    history.push(textMessage('user', question));
    const said = textMessage('assistant', answer(i));
    const s = span({
      name: 'chat gpt-4o',
      id: `${run}-${i}`,
      traceId,
      start: i * 100,
      end: i * 100 + 50,
      kind: 'client',
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.conversation.id': run,
        'gen_ai.system_instructions': JSON.stringify([{ type: 'text', content: system }]),
        'gen_ai.input.messages': JSON.stringify(history),
        'gen_ai.output.messages': JSON.stringify([{ ...said, finish_reason: 'stop' }]),
      },
    });
    history.push(said);
    return s;
  });
}
