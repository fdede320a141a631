/**
 * @module ingest/derive
 * Spans → run facts and stored steps: normalize (pure), then offload large values (payload
 * store), then the identities of the stored form (digests, fingerprint). Used by ingest and
 * by reindex, so a normalizer fix re-derives exactly what ingest would derive today.
 */
import { normalizeSpan, NORMALIZER_VERSION } from '../normalize/normalize.js';
import { fingerprintName, fingerprintOf } from '../normalize/finish.js';
import { offloadLargeValues } from '../payloads/offload.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import { searchLexemes } from '../recall/recorded-text.js';
import type { DeriveSpans, DerivedSpan } from './ingest.js';

export interface DeriveDeps {
  payloads: PayloadStore;
}

export interface DeriveSettings {
  payloadThresholdBytes: number;
}

export function createDeriveSpans(deps: DeriveDeps, settings: DeriveSettings): DeriveSpans {
  return async (spans, logsOf) => {
    const out: DerivedSpan[] = [];
    // One at a time: offloading may hold a large value's canonical JSON in memory.
    for (const span of spans) {
      const facts = normalizeSpan(span, logsOf(span));
      if (!facts.step) {
        out.push({ ownRun: facts.ownRun, ownParentRun: facts.parentRun, step: null });
        continue;
      }
      // Recall's words come from the full values, before large ones are moved out.
      const search = searchLexemes(facts.step);
      const stored = await offloadLargeValues(facts.step, deps.payloads, settings.payloadThresholdBytes);
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
          search,
        },
      });
    }
    return out;
  };
}
