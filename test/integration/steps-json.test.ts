/**
 * Steps keep request and response as json (migration 0007): the canonical JSON text as
 * written. A prompt holding NUL or an unpaired surrogate (which jsonb refuses) is stored,
 * read back exactly by the tape API, and the public views, which show jsonb, still answer
 * queries over such a step (with U+FFFD in those places) instead of failing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { databaseKinds } from '../helpers/databases.js';
import { span } from '../helpers/span-builder.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const PROMPT = 'before\u0000after \ud800 lone, pair \ud83d\ude00 end';

describe.each(databaseKinds)('steps as json on %s', (kind) => {
  let t: TestTapedeck;
  beforeAll(async () => {
    t = await startTestTapedeck(kind);
    await ingestSpans(
      [
        span({
          name: 'chat gpt-4o',
          id: 'odd',
          attributes: {
            'gen_ai.operation.name': 'chat',
            'gen_ai.request.model': 'gpt-4o',
            'gen_ai.conversation.id': 'odd-session',
            'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: PROMPT }] }]),
          },
        }),
      ],
      { tenant: '' },
      t.running.store.ingest,
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('stores the prompt as it was, and the tape API reads it back so', async () => {
    const tape = (await (await fetch(`${t.url}/v1/tapes/odd-session`)).json()) as {
      steps: { request: { content: string }[] }[];
    };
    expect(tape.steps).toHaveLength(1);
    expect(tape.steps[0].request[0].content).toBe(PROMPT);
  });

  it('the views answer over it, with U+FFFD for what jsonb cannot hold', async () => {
    const [step] = await t.db.query<{ request: { content: string }[] }>(
      `SELECT request FROM tapedeck.tape_steps WHERE run = 'odd-session'`,
    );
    expect(step.request[0].content).toBe('before\ufffdafter \ufffd lone, pair \ud83d\ude00 end');
    const messages = await t.db.query<{ role: string }>(
      `SELECT role FROM tapedeck.step_messages WHERE run = 'odd-session'`,
    );
    expect(messages).toEqual([{ role: 'user' }]);
  });
});
