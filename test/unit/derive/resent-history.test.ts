/**
 * An agent resends its whole history on every call. Deriving a call whose
 * gen_ai.input.messages extends an earlier call's reads only the new messages and reuses the
 * earlier call's (normalize/genai-parts.ts, derive.ts inlineMessages): the stored step must be
 * exactly what reading the call on its own gives. A text with a space after its closing bracket
 * is read on its own (only a text that ends where its list does is remembered), so the same
 * calls with one read on their own first; as sent, each reuses the one before.
 */
import { describe, expect, it } from 'vitest';
import { createDeriveSpans, inlineStep, normalizeFacts } from '../../../src/derive/derive.js';
import type { JsonValue } from '../../../src/json/json-value.js';
import type { StepDraft } from '../../../src/normalize/step.js';
import { createMemoryPayloadStore } from '../../../src/payloads/memory-payload-store.js';
import type { SpanRecord } from '../../../src/spans/span-record.js';
import type { StoredStep } from '../../../src/tapes/step-rows.js';
import { conversationSpans } from '../../helpers/conversation-spans.js';

const derive = createDeriveSpans({ payloads: createMemoryPayloadStore() }, { payloadThresholdBytes: 256 * 1024 });

async function stepsOneByOne(spans: readonly SpanRecord[]): Promise<StoredStep[]> {
  const out: StoredStep[] = [];
  for (const s of spans) out.push((await derive([s], () => []))[0].step as StoredStep);
  return out;
}

const stored = (s: StoredStep) => ({
  requestDigest: s.requestDigest,
  responseDigest: s.responseDigest,
  fingerprint: s.fingerprint,
  request: s.requestMessages?.map((m) => [Buffer.from(m.digest).toString('hex'), Buffer.from(m.body).toString()]),
  response: s.responseMessages?.map((m) => [Buffer.from(m.digest).toString('hex'), Buffer.from(m.body).toString()]),
});

/** The same spans, gen_ai.input.messages changed by `edit`. */
function withInput(spans: SpanRecord[], edit: (text: string) => string): SpanRecord[] {
  return spans.map((s) => ({
    ...s,
    attributes: { ...s.attributes, 'gen_ai.input.messages': edit(s.attributes['gen_ai.input.messages'] as string) },
  }));
}

/** The same spans with gen_ai.input.messages written as Python's json.dumps writes it. */
const spacedJson = (spans: SpanRecord[]) =>
  withInput(spans, (text) => text.replaceAll('","', '", "').replaceAll('},{', '}, {'));

describe('a call resending an earlier call history', () => {
  const conversation = (run: string) =>
    conversationSpans({
      run,
      system: 'Answer briefly.',
      // long enough for a list's hash state to be kept (derive.ts) from the fourth call on
      questions: Array.from(
        { length: 12 },
        (_, i) => `question ${i} of ${run}: "quoted", \\ back, 日本語, \u{1F600} ${'and so on '.repeat(300)}`,
      ),
      answer: (i) => `answer ${i} of ${run}\nwith a newline and \t a tab`,
    });

  it.each([
    ['compact JSON', conversation('compact')],
    ['JSON with spaces after commas', spacedJson(conversation('spaced'))],
  ])('is stored as it is when read on its own (%s)', async (_name, spans) => {
    const fresh = await stepsOneByOne(withInput(spans, (text) => `${text} `));
    const reused = await stepsOneByOne(spans);
    expect(reused.map(stored)).toEqual(fresh.map(stored));
    expect(reused[11].requestMessages).toHaveLength(24); // the system instructions first
    // in order, the history's messages (after the system instructions, read from their own
    // attribute) are the earlier call's own: read and hashed once
    for (let k = 1; k < reused.length; k++)
      for (let j = 1; j < reused[k - 1].requestMessages!.length; j++)
        expect(reused[k].requestMessages![j]).toBe(reused[k - 1].requestMessages![j]);
    for (let k = 1; k < fresh.length; k++)
      expect(fresh[k].requestMessages![1]).not.toBe(fresh[k - 1].requestMessages![1]);
  });

  it('gives each list its own digest when runs share their first calls, then part, and a call comes twice', async () => {
    const run = (name: string) =>
      conversationSpans({
        run: 'shared',
        system: 'Answer briefly.',
        questions: Array.from({ length: 8 }, (_, i) =>
          (i < 3 ? `shared question ${i} ` : `question ${i} of ${name} `).repeat(400),
        ),
        answer: (i) => (i < 3 ? `shared answer ${i}` : `answer ${i} of ${name}`),
      });
    const [x, y] = [run('x'), run('y')];
    // in turn, as two agents send them, and x's fifth call sent again (a retried export)
    const sent = x.flatMap((s, i) => (i === 4 ? [s, y[i], s] : [s, y[i]]));
    const reused = await stepsOneByOne(sent);
    const fresh = await stepsOneByOne(withInput(sent, (text) => `${text} `));
    expect(reused.map(stored)).toEqual(fresh.map(stored));
    expect(new Set(reused.map((s) => s.requestDigest)).size).toBe(3 + 2 * 5);
  });

  it('hashes a list on from one hashed before only when it starts with the very same messages', () => {
    const [first] = conversation('lists');
    const draft = normalizeFacts(first, []).step as StepDraft;
    const digestOf = (request: JsonValue[]) =>
      inlineStep(first, { ...draft, request } as StepDraft, 256 * 1024)?.requestDigest;
    // each list long enough for its hash state to be kept
    const text = (t: string) => ({ role: 'user', content: [{ type: 'text', text: `${t} `.repeat(2000) }] });
    const [a, b, last, next] = [text('a'), text('b'), text('the same last message'), text('next')];
    const fresh = (list: JsonValue[]) => digestOf(structuredClone(list));
    expect(digestOf([a, last])).toBe(fresh([a, last]));
    // the same last message after another: not the list hashed before
    expect(digestOf([b, last])).toBe(fresh([b, last]));
    expect(digestOf([b, last])).not.toBe(digestOf([a, last]));
    // continuing it, and resent as it is
    expect(digestOf([b, last, next])).toBe(fresh([b, last, next]));
    expect(digestOf([b, last, next])).toBe(fresh([b, last, next]));
  });

  it('reads a call that changed its history in full', async () => {
    const spans = conversation('edited');
    await stepsOneByOne(spans.slice(0, 3));
    // the fourth call rewrote the first question (an agent trimming or editing its context)
    const input = JSON.parse(spans[3].attributes['gen_ai.input.messages'] as string);
    input[0].parts[0].content = 'a different first question';
    const edited = {
      ...spans[3],
      attributes: { ...spans[3].attributes, 'gen_ai.input.messages': JSON.stringify(input) },
    };
    const [step] = await stepsOneByOne([edited]);
    expect(Buffer.from(step.requestMessages![1].body).toString()).toContain('a different first question');
    expect(step.requestMessages).toHaveLength(8);
  });
});
