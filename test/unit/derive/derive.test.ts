/**
 * createDeriveSpans (src/derive/derive.ts) canonicalises a step's request and response once
 * and keeps the text for the writer when they stay inline, instead of going through
 * offloadLargeValues. Whatever the threshold, the stored step must be exactly what
 * offloadLargeValues gives (stored form, digests, fingerprint, what lands in the payload
 * store), except that a model step's message list whose messages each fit the threshold
 * stays whole for the message store whatever its length; and the kept text must be JSON of
 * the stored value. Checked over every span of every corpus capture, at the default
 * threshold and at small ones that offload.
 */
import { describe, expect, it } from 'vitest';
import { createDeriveSpans } from '../../../src/derive/derive.js';
import { canonicalJson } from '../../../src/json/canonical.js';
import { fingerprintName, fingerprintOf, requestDigestOf } from '../../../src/normalize/finish.js';
import { normalizeSpan } from '../../../src/normalize/normalize.js';
import { createMemoryPayloadStore } from '../../../src/payloads/memory-payload-store.js';
import { offloadLargeValues } from '../../../src/payloads/offload.js';
import { withFinishReason } from '../../../src/tapes/answer-turns.js';
import { listCaptures, loadCapture } from '../../helpers/corpus.js';
import { logsBySpan } from '../../helpers/tapes.js';
import type { JsonValue } from '../../../src/json/json-value.js';

/** A list of messages (objects, none with a "$payload" key) each no longer than the threshold. */
function goesToMessageStore(value: JsonValue | null, threshold: number): boolean {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every(
      (m) =>
        typeof m === 'object' &&
        m !== null &&
        !Array.isArray(m) &&
        !('$payload' in m) &&
        Buffer.byteLength(canonicalJson(m)) <= threshold,
    )
  );
}

describe.each([256 * 1024, 2048, 300, 0])('derive at threshold %i bytes', (threshold) => {
  it.each(listCaptures().map((c) => [`${c.layout}/${c.scenario}`, c] as const))(
    'stores what offloadLargeValues stores for %s',
    async (_name, ref) => {
      const capture = await loadCapture(ref);
      const logs = logsBySpan(capture.logs);
      const logsOf = (s: { traceId: string; spanId: string }) => logs.get(`${s.traceId}/${s.spanId}`) ?? [];
      const derivedEntries = new Map<string, Uint8Array>();
      const derivedStore = createMemoryPayloadStore({ entries: derivedEntries });
      const derived = await createDeriveSpans({ payloads: derivedStore }, { payloadThresholdBytes: threshold })(
        capture.spans,
        logsOf,
      );
      const referenceEntries = new Map<string, Uint8Array>();
      const referenceStore = createMemoryPayloadStore({ entries: referenceEntries });
      for (const [i, span] of capture.spans.entries()) {
        const facts = normalizeSpan(span, logsOf(span));
        const got = derived[i].step;
        if (!facts.step) {
          expect(got).toBeNull();
          continue;
        }
        // the values the message store keeps are not offloaded; the digests are of the values as they came
        const kept = (v: JsonValue | null) => facts.step!.kind === 'llm' && goesToMessageStore(v, threshold);
        const offloaded = await offloadLargeValues(
          {
            ...facts.step,
            request: kept(facts.step.request) ? null : facts.step.request,
            response: kept(facts.step.response) ? null : facts.step.response,
          },
          referenceStore,
          threshold,
        );
        const logical = await offloadLargeValues(facts.step, createMemoryPayloadStore(), Number.MAX_SAFE_INTEGER);
        const ref = {
          draft: {
            ...offloaded.draft,
            request: kept(facts.step.request) ? facts.step.request : offloaded.draft.request,
            response: kept(facts.step.response) ? facts.step.response : offloaded.draft.response,
          },
          requestDigest: logical.requestDigest,
          responseDigest: logical.responseDigest,
        };
        expect(got).not.toBeNull();
        expect(got!.draft).toEqual(ref.draft);
        // a model step's request digest covers the tools and options it recorded (finish.ts)
        const requestDigest = requestDigestOf(facts.step, ref.requestDigest);
        expect([got!.requestDigest, got!.responseDigest]).toEqual([requestDigest, ref.responseDigest]);
        const d = ref.draft;
        expect(got!.fingerprint).toBe(fingerprintOf(d.kind, fingerprintName(d), requestDigest));
        // the bytes stored are the canonical JSON the digests are of
        const text = (bytes: Uint8Array | null) => (bytes === null ? null : Buffer.from(bytes).toString('utf8'));
        if (got!.requestJson !== undefined)
          expect(text(got!.requestJson)).toBe(d.request === null ? null : canonicalJson(d.request));
        if (got!.responseJson !== undefined)
          expect(text(got!.responseJson)).toBe(d.response === null ? null : canonicalJson(d.response));
        // a list in the message store: its messages joined back (an answer stored as its turn
        // given its finish_reason again) are the list's canonical JSON
        const joined = (messages: readonly { body: Uint8Array }[], reasons?: readonly (string | null)[] | null) =>
          `[${messages.map((m, i) => (reasons?.[i] ? withFinishReason(text(m.body)!, reasons[i]) : text(m.body))).join(',')}]`;
        if (got!.requestMessages) expect(joined(got!.requestMessages)).toBe(canonicalJson(d.request!));
        if (got!.responseMessages)
          expect(joined(got!.responseMessages, got!.responseFinishReasons)).toBe(canonicalJson(d.response!));
        else expect(got!.responseFinishReasons).toBeUndefined();
        expect(Boolean(got!.requestMessages)).toBe(kept(facts.step.request));
      }
      expect([...derivedEntries.keys()].sort()).toEqual([...referenceEntries.keys()].sort());
      if (threshold === 0 && capture.groundTruth.content_capture) expect(derivedEntries.size).toBeGreaterThan(0);
    },
  );
});
