/**
 * Long texts go to the derive worker as what they add to the last one sent for their trace and
 * attribute: whatever is left out, the worker puts back exactly, chunk after chunk, and what
 * does not continue a kept text (an earlier message edited, another trace) goes whole.
 */
import { describe, expect, it } from 'vitest';
import {
  RESENT_MAX_CHARS,
  RESENT_MIN_CHARS,
  ResentTextReceiver,
  ResentTextSender,
  type ResentTexts,
} from '../../../src/derive/resent-texts.js';
import type { SpanRecord } from '../../../src/spans/span-record.js';
import { span } from '../../helpers/span-builder.js';

const KEY = 'gen_ai.input.messages';
const message = (i: number, size = 4096) => JSON.stringify({ role: 'user', content: `${i} `.repeat(size / 2) });
/** The history text of a conversation's call k: its first k + 1 messages. */
const history = (k: number, size?: number, edit = -1) =>
  `[${Array.from({ length: k + 1 }, (_, i) => message(i === edit ? -i : i, size)).join(',')}]`;

const call = (trace: string, k: number, text: string) =>
  span({
    name: 'chat',
    id: `${trace}-${k}`,
    traceId: trace.padStart(32, '0'),
    attributes: { [KEY]: text, other: 'x' },
  });

/** Sends the chunks as a worker gets them (a structured clone), and the spans it puts back. */
function sendAll(chunks: SpanRecord[][], sender = new ResentTextSender(), receiver = new ResentTextReceiver()) {
  const sent: { spans: SpanRecord[]; resent: ResentTexts | undefined }[] = [];
  const restored = chunks.map((chunk) => {
    const prepared = sender.prepare('tenant', chunk);
    const message = structuredClone({ spans: prepared.spans, resent: prepared.resent });
    prepared.sent();
    sent.push(structuredClone(message));
    receiver.restore(message.spans, message.resent);
    return message.spans;
  });
  return { sent, restored };
}

describe('long texts sent to the derive worker', () => {
  it('go as their tails and come back whole, within a chunk and across chunks, traces interleaved', () => {
    const a = Array.from({ length: 12 }, (_, k) => call('a', k, history(k)));
    const b = Array.from({ length: 12 }, (_, k) => call('b', k, history(k, 3072)));
    const chunks = [
      [a[0], b[0], a[1], a[2]],
      [b[1], b[2], a[3]],
      [a[4], a[5], a[6], b[3], b[4], b[5], b[6], b[7], a[7], a[8], a[9], a[10], a[11], b[8], b[9], b[10], b[11]],
    ];
    const { sent, restored } = sendAll(chunks);
    expect(restored).toEqual(chunks);
    const texts = sent.flatMap((s) => s.resent?.texts ?? []);
    const long = [...a, ...b].filter((s) => (s.attributes[KEY] as string).length >= RESENT_MIN_CHARS);
    expect(texts).toHaveLength(long.length);
    // the first long text of each trace goes whole, every later one as what it adds
    expect(new Set(long.map((s) => s.traceId)).size).toBe(2);
    expect(texts.filter((t) => t.tail === undefined)).toHaveLength(2);
    for (const t of texts.filter((t) => t.tail !== undefined)) {
      expect(t.tail?.startsWith(',')).toBe(true);
      expect(t.tail?.length).toBeLessThan(2 * 4096);
    }
    for (const s of sent)
      for (const t of s.resent?.texts ?? []) if (t.tail) expect(s.spans[t.span].attributes[KEY]).toBeUndefined();
  });

  it('sends whole a text whose earlier messages changed, a shorter one and a short one', () => {
    const texts = [history(10), history(11, 4096, 3), history(9), history(12), history(0, 100)];
    const chunks = texts.map((text, k) => [call('c', k, text)]);
    const { sent, restored } = sendAll(chunks);
    expect(restored).toEqual(chunks);
    expect(sent.map((s) => s.resent?.texts.map((t) => t.tail !== undefined))).toEqual([
      [false],
      [false],
      [false],
      [true], // continues the one before it
      [], // short: not kept (the texts before it forgotten)
    ]);
  });

  it('keeps at most RESENT_MAX_CHARS, telling the worker what it forgets', () => {
    const size = 64 * 1024;
    const traces = Math.ceil(RESENT_MAX_CHARS / (4 * size)) + 2;
    const first = Array.from({ length: traces }, (_, t) => call(`t${t}`, 0, history(3, size)));
    const next = Array.from({ length: traces }, (_, t) => call(`t${t}`, 1, history(4, size)));
    const { sent, restored } = sendAll([first, next]);
    expect(restored).toEqual([first, next]);
    const forgotten = sent[1].resent?.forget ?? [];
    expect(forgotten.length).toBeGreaterThan(0);
    // the oldest traces' texts were forgotten: their next calls go whole
    const whole = (sent[1].resent?.texts ?? []).filter((t) => t.tail === undefined).map((t) => t.span);
    expect(whole).toEqual(Array.from({ length: whole.length }, (_, i) => i));
  });

  it('keeps nothing of a chunk that was prepared and not sent', () => {
    const sender = new ResentTextSender();
    sender.prepare('tenant', [call('d', 0, history(10))]);
    const { sent, restored } = sendAll([[call('d', 1, history(11))]], sender);
    expect(sent[0].resent?.texts[0].tail).toBeUndefined();
    expect(restored[0][0].attributes[KEY]).toBe(history(11));
  });

  it('fails loudly when the worker lacks a text a chunk continues', () => {
    const sender = new ResentTextSender();
    sendAll([[call('e', 0, history(10))]], sender);
    expect(() => sendAll([[call('e', 1, history(11))]], sender)).toThrow(/does not hold text/);
  });
});
