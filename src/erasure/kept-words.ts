/**
 * @module erasure/kept-words
 * A payload erased by name leaves its steps in place, reading the reference as erased, so
 * recall must stop finding them by the erased text. A step's own words are one set for its
 * request and response together; a step whose other side is offloaded too keeps that side's
 * words only if its payload is read again. That read happens here, before the erasure's
 * transaction: a payload store backed by the database queries the connection the
 * transaction would hold (on PGlite, its only one).
 */
import { type JsonValue, storedJson } from '../json/json-value.js';
import { resolvePayloads } from '../payloads/resolve-payloads.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import { stepOwnWords } from '../recall/recorded-text.js';
import type { Queryable } from '../store/database.js';

/** A step's key as reindexed_steps rows are matched to it: "tenant\u0000trace hex/span hex". */
export function stepKey(tenant: string, traceHex: string, spanHex: string): string {
  return `${tenant}\u0000${traceHex}/${spanHex}`;
}

/** A step's own text as stored (payload references unresolved), for a query over steps `st`. */
export interface StoredStepText {
  tenant: string;
  trace_id: string;
  span_id: string;
  name: string;
  tool: string | null;
  request: string | null;
  response: string | null;
  in_request: boolean;
  in_response: boolean;
}

export const storedStepTextColumns = `st.tenant, encode(st.trace_id, 'hex') AS trace_id,
  encode(st.span_id, 'hex') AS span_id, st.name, st.tool, st.request, st.response,
  st.request_messages IS NOT NULL AS in_request, st.response_messages IS NOT NULL AS in_response`;

/** The step's own words with its request and response as given (its lists in the message store aside). */
export function ownWords(st: StoredStepText, request: JsonValue | null, response: JsonValue | null): Int32Array {
  return stepOwnWords(
    { name: st.name, tool: st.tool, request, response },
    { request: st.in_request, response: st.in_response },
  );
}

/**
 * The words each step referencing `named` keeps once it is erased: its own text with every
 * other offloaded value read back, the named one left as the reference it becomes. Steps
 * with no other offloaded value are left out (their stored text holds all they keep).
 */
export async function wordsKeptWithout(
  db: Queryable,
  payloads: PayloadStore,
  tenant: string | null,
  named: string,
): Promise<Map<string, Int32Array>> {
  const steps = await db.query<StoredStepText>(
    `SELECT ${storedStepTextColumns}
       FROM tapedeck_store.steps st
      WHERE (tapedeck_store.payload_ref_of(st.request) = $1 OR tapedeck_store.payload_ref_of(st.response) = $1)
        AND ($2::text IS NULL OR st.tenant = $2)
        AND (coalesce(tapedeck_store.payload_ref_of(st.request), $1) <> $1
             OR coalesce(tapedeck_store.payload_ref_of(st.response), $1) <> $1)`,
    [named, tenant],
  );
  // Every payload but the erased one; that one reads as missing and stays a reference.
  const withoutNamed: PayloadStore = {
    ...payloads,
    get: (ref) => (ref === named ? Promise.resolve(undefined) : payloads.get(ref)),
  };
  const readBack = async (text: string | null): Promise<JsonValue | null> =>
    (await resolvePayloads(storedJson(text), withoutNamed, { maxBytes: Number.MAX_SAFE_INTEGER })).value;
  const kept = new Map<string, Int32Array>();
  for (const st of steps)
    kept.set(
      stepKey(st.tenant, st.trace_id, st.span_id),
      ownWords(st, await readBack(st.request), await readBack(st.response)),
    );
  return kept;
}
