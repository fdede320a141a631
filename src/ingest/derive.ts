/**
 * @module ingest/derive
 * Spans → run facts and stored steps: normalize (pure), then offload large values (payload
 * store), then the identities of the stored form (digests, fingerprint). Used by ingest and
 * by reindex, so a normalizer fix re-derives exactly what ingest would derive today.
 */
import { DIALECTS } from '../normalize/dialects/index.js';
import { normalizeSpan, NORMALIZER_VERSION } from '../normalize/normalize.js';
import { fingerprintName, fingerprintOf } from '../normalize/finish.js';
import { canonicalJson, sha256Hex } from '../json/canonical.js';
import type { JsonValue, StepDraft } from '../normalize/step.js';
import { offloadLargeValues, type OffloadResult } from '../payloads/offload.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import { searchWords } from '../recall/recorded-text.js';
import type { SpanRecord } from '../spans/span-record.js';
import type { DeriveSpans, DerivedSpan } from './ingest.js';

export interface DeriveDeps {
  payloads: PayloadStore;
  /** told when a dialect throws on a span, which is then stored with no step */
  onDialectError?: (span: SpanRecord, error: unknown, layout: string) => void;
}

export interface DeriveSettings {
  payloadThresholdBytes: number;
}

export function createDeriveSpans(deps: DeriveDeps, settings: DeriveSettings): DeriveSpans {
  return async (spans, logsOf) => {
    const out: DerivedSpan[] = [];
    const onError = deps.onDialectError;
    // One at a time: offloading may hold a large value's canonical JSON in memory.
    for (const span of spans) {
      const facts = normalizeSpan(span, logsOf(span), DIALECTS, onError && ((error, layout) => onError(span, error, layout)));
      if (!facts.step) {
        out.push({ ownRun: facts.ownRun, ownParentRun: facts.parentRun, step: null });
        continue;
      }
      // Recall's words come from the full values, before large ones are moved out.
      const words = searchWords(facts.step);
      const stored = await offloadIfLarge(facts.step, deps.payloads, settings.payloadThresholdBytes);
      const d = stored.draft;
      out.push({
        ownRun: facts.ownRun,
        ownParentRun: facts.parentRun,
        step: {
          traceId: span.traceId,
          spanId: span.spanId,
          draft: stored.draft,
          requestDigest: stored.requestDigest,
          responseDigest: stored.responseDigest,
          fingerprint: fingerprintOf(d.kind, fingerprintName(d.kind, d.name, d.model, d.tool), stored.requestDigest),
          normalizerVersion: NORMALIZER_VERSION,
          words,
          requestJson: stored.requestJson,
          responseJson: stored.responseJson,
        },
      });
    }
    return out;
  };
}

/**
 * offloadLargeValues canonicalises request and response to measure them, and leaves a value
 * at or under the threshold inline with the digest of its canonical JSON (payloads/offload.ts,
 * "The rules"). That is nearly every step: canonicalise such values once here and keep the
 * text, which the step writer stores as the jsonb (any JSON text of a value is the same
 * jsonb), where otherwise offloading would serialise them and the writer again. A value over
 * the threshold goes through offloadLargeValues as before.
 */
async function offloadIfLarge(
  draft: StepDraft, payloads: PayloadStore, thresholdBytes: number,
): Promise<OffloadResult<StepDraft> & { requestJson?: string | null; responseJson?: string | null }> {
  const request = inlineJson(draft.request, thresholdBytes);
  const response = request === undefined ? undefined : inlineJson(draft.response, thresholdBytes);
  if (request === undefined || response === undefined) return offloadLargeValues(draft, payloads, thresholdBytes);
  return {
    draft,
    payloads: [],
    requestDigest: request === null ? null : sha256Hex(request),
    responseDigest: response === null ? null : sha256Hex(response),
    requestJson: request,
    responseJson: response,
  };
}

/** The canonical JSON of a value that stays inline; undefined when it is over the threshold. */
function inlineJson(value: JsonValue | null, thresholdBytes: number): string | null | undefined {
  if (value === null) return null;
  const text = canonicalJson(value);
  return Buffer.byteLength(text, 'utf8') <= thresholdBytes ? text : undefined;
}
