/**
 * @module derive/resent-texts
 * Long attribute texts sent to the derive worker as what they add to the last one sent for the
 * same trace and attribute. An agent resends its whole history on every model call, and the
 * GenAI layout writes it as one text (gen_ai.input.messages: `[a,b]`, then `[a,b,c,d]`), so
 * most of each call's text is the call before's. Cloned whole, a text of a long conversation
 * is copied into the message, then into a fresh large-object page range on the worker, which
 * is most of what the worker spends on it (docs/benchmarks.md, "A resent history read once").
 *
 * The sender (this thread) and the receiver (the worker) keep the same texts under the same
 * ids: the sender says which it keeps and which it forgets in each chunk, and the worker takes
 * every chunk it is sent, in order (a cancelled transaction's too). A text is sent as a tail
 * only when its start equals the kept text's all but last character (`[a,b` of `[a,b]`).
 */
import { type Continuation, expectContinuations } from '../normalize/genai-parts.js';
import type { SpanRecord } from '../spans/span-record.js';

/**
 * Texts shorter than this are cloned whole, and not kept: what is saved grows with the text,
 * and a conversation's history passes this within a few calls of 2 KB messages.
 */
export const RESENT_MIN_CHARS = 32 * 1024;
/** Characters of the texts the sender keeps at most (the worker keeps as many again). */
export const RESENT_MAX_CHARS = 8 * 1024 * 1024;

/** A long text of a chunk's span: kept by the worker under `id`, and sent as a tail when `base` is set. */
export interface ResentText {
  /** the span's index in the chunk */
  span: number;
  /** the attribute */
  key: string;
  id: number;
  /** the kept text this one continues: the span's attribute is its all but last character, then `tail` */
  base?: number;
  tail?: string;
}

/** What a chunk carries of the long texts: theirs, and the ids the worker no longer needs. */
export interface ResentTexts {
  texts: ResentText[];
  forget: number[];
}

interface Kept {
  id: number;
  text: string;
}

/** The sending side: the texts last sent, by tenant, trace and attribute. */
export class ResentTextSender {
  private nextId = 1;
  private readonly kept = new Map<string, Kept>();
  private chars = 0;
  private forgotten: number[] = [];

  /**
   * The spans to send, each long text that continues a kept one left out of its copy's
   * attributes, and what the worker needs to put it back. `sent` is to be called once the
   * chunk is posted: until then nothing is kept or forgotten.
   */
  prepare(
    tenant: string,
    spans: readonly SpanRecord[],
  ): { spans: SpanRecord[]; resent: ResentTexts | undefined; sent: () => void } {
    const texts: ResentText[] = [];
    const keep: [string, Kept][] = [];
    // a trace's later call in the same chunk continues its earlier one
    const latest = new Map<string, Kept>();
    // a loop, not a callback made per chunk (docs/architecture.md, "Decisions and why")
    const out: SpanRecord[] = [];
    for (let index = 0; index < spans.length; index++) {
      const span = spans[index];
      let attributes: SpanRecord['attributes'] | undefined;
      for (const key in span.attributes) {
        const text = span.attributes[key];
        if (typeof text !== 'string' || text.length < RESENT_MIN_CHARS || text.length > RESENT_MAX_CHARS) continue;
        const where = `${tenant}\u0000${span.traceId}\u0000${key}`;
        const id = this.nextId + keep.length;
        const before = latest.get(where) ?? this.kept.get(where);
        const kept = { id, text };
        keep.push([where, kept]);
        latest.set(where, kept);
        const cut = before ? before.text.length - 1 : 0;
        // equality of two slices compares their memory; startsWith goes character by character
        if (before && text.length > before.text.length && text.slice(0, cut) === before.text.slice(0, cut)) {
          attributes ??= { ...span.attributes };
          delete attributes[key];
          texts.push({ span: index, key, id, base: before.id, tail: text.slice(cut) });
        } else {
          texts.push({ span: index, key, id });
        }
      }
      out.push(attributes ? { ...span, attributes } : span);
    }
    const forget = this.forgotten;
    const sent = () => {
      this.forgotten = [];
      this.nextId += keep.length;
      for (const [where, k] of keep) {
        const before = this.kept.get(where);
        if (before) this.drop(where, before);
        this.kept.set(where, k);
        this.chars += k.text.length;
      }
      for (const [where, k] of this.kept) {
        if (this.chars <= RESENT_MAX_CHARS) break;
        this.drop(where, k);
      }
    };
    const resent = texts.length > 0 || forget.length > 0 ? { texts, forget } : undefined;
    return { spans: out, resent, sent };
  }

  private drop(where: string, k: Kept): void {
    this.kept.delete(where);
    this.chars -= k.text.length;
    this.forgotten.push(k.id);
  }
}

/** The receiving side (the worker): puts the texts back into the chunk's spans. */
export class ResentTextReceiver {
  /** by id: a kept text, and its all but last character built up of the tails received */
  private readonly kept = new Map<number, { text: string; open: string }>();

  restore(spans: SpanRecord[], resent: ResentTexts | undefined): void {
    const continuations: Continuation[] = [];
    for (const id of resent?.forget ?? []) this.kept.delete(id);
    for (const t of resent?.texts ?? []) {
      const attributes = spans[t.span].attributes;
      if (t.base === undefined) {
        const text = attributes[t.key] as string;
        this.kept.set(t.id, { text, open: text.slice(0, -1) });
        continue;
      }
      const base = this.kept.get(t.base);
      const tail = t.tail;
      if (base === undefined || tail === undefined) throw new Error(`the derive worker does not hold text ${t.base}`);
      // pieces, not one flat copy: the reader is told what the text continues
      const text = base.open + tail;
      attributes[t.key] = text;
      this.kept.set(t.id, { text, open: base.open + tail.slice(0, -1) });
      continuations.push({ text, earlier: base.text, tail });
    }
    expectContinuations(continuations);
  }
}
