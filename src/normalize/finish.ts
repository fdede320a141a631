/**
 * @module normalize/finish
 * A draft becomes a stored step: request and response digests (lower-case hex SHA-256 of
 * their RFC 8785 canonical JSON) and the fingerprint `kind:name#<first 16 hex of the
 * request digest>`. Digests describe the values as recorded, never a stored form holding
 * {"$payload": …} references (payloads/offload.ts hands over the same digests), in their
 * comparable form, JSON-shaped text read as JSON (comparable.ts; docs/architecture.md
 * "Digests and fingerprints").
 */
import type { SpanRecord } from '../spans/span-record.js';
import type { Step, StepDraft, StepKind } from './step.js';
import type { JsonValue } from '../json/json-value.js';
import { comparableDigest } from './comparable.js';
import { requestIdentity, requestOptionsOf } from './request-options.js';

/** The step fields a draft determines; span placement (ids, times, service) comes from the span. */
export type FinishedStep = Omit<
  Step,
  'index' | 'service' | 'trace_id' | 'span_id' | 'parent_span_id' | 'start_ns' | 'duration_ns'
>;

/** A stored step before it has a place on a tape (assemble.ts numbers them). */
export type StepRow = Omit<Step, 'index'>;

/**
 * For llm steps the request model, else the model shown ("unknown" when none was recorded):
 * the request model is what every layout records for the same call, where the response model
 * (a dated snapshot name) is missing from some, e.g. OpenInference's streamed calls. Tool
 * name for tools, agent name for agents.
 */
export function fingerprintName(
  d: Pick<StepDraft, 'kind' | 'name' | 'model' | 'tool'> & { requestModel?: string | null },
): string {
  if (d.kind === 'llm') return d.requestModel ?? d.model ?? 'unknown';
  if (d.kind === 'tool') return d.tool ?? d.name;
  return d.name;
}

/**
 * `kind:name#<first 16 hex of the request digest>`. When the request was not recorded
 * (content capture off) there is no digest and the fingerprint ends at `#`: it still groups
 * by kind and name, and can never be mistaken for (or collide with) a recorded request.
 */
export function fingerprintOf(kind: StepKind, name: string, requestDigest: string | null): string {
  return `${kind}:${name}#${requestDigest ? requestDigest.slice(0, 16) : ''}`;
}

/**
 * The request digest: of the request, and for a model step that recorded request options
 * (tools, tool_choice, response_format: request-options.ts) of them with its messages.
 * `valueDigest` is the request's own digest when the caller has it already (the digest of
 * its canonical JSON, or of its comparable form).
 */
export function requestDigestOf(
  draft: Pick<StepDraft, 'kind' | 'request' | 'params'>,
  valueDigest?: string | null,
): string | null {
  if (draft.request === null) return null;
  if (draft.kind === 'llm') {
    const identity = requestIdentity(draft.request, requestOptionsOf(draft.params));
    if (identity !== draft.request) return comparableDigest(identity);
  }
  return comparableDigest(draft.request, valueDigest);
}

/** The response digest (`valueDigest`: as requestDigestOf's). */
export function responseDigestOf(response: JsonValue | null, valueDigest?: string | null): string | null {
  return comparableDigest(response, valueDigest);
}

export function finishStep(draft: StepDraft): FinishedStep {
  const requestDigest = requestDigestOf(draft);
  return {
    kind: draft.kind,
    name: draft.name,
    model: draft.model,
    tool: draft.tool,
    status: draft.status,
    request: draft.request,
    response: draft.response,
    request_digest: requestDigest,
    response_digest: responseDigestOf(draft.response),
    fingerprint: fingerprintOf(draft.kind, fingerprintName(draft), requestDigest),
    tokens: draft.tokens,
    params: draft.params,
    layout: draft.layout,
    cost_usd: draft.costUsd,
    tool_call_id: draft.toolCallId ?? null,
  };
}

/** A finished step placed on its span: what the store keeps per step row. */
export function toStepRow(span: SpanRecord, finished: FinishedStep): StepRow {
  return {
    ...finished,
    service: span.serviceName,
    trace_id: span.traceId,
    span_id: span.spanId,
    parent_span_id: span.parentSpanId,
    start_ns: span.startTimeUnixNano,
    duration_ns: span.endTimeUnixNano - span.startTimeUnixNano,
  };
}

/** `kind:name`: the fingerprint without its `#<input hash>` suffix. */
export function signatureOf(step: Step): string {
  const fp = step.fingerprint;
  const hash = fp.lastIndexOf('#');
  if (hash > 0 && /^[0-9a-f]*$/.test(fp.slice(hash + 1))) return fp.slice(0, hash);
  if (fp) return fp;
  const name =
    step.kind === 'llm' ? (step.model ?? step.name) : step.kind === 'tool' ? (step.tool ?? step.name) : step.name;
  return `${step.kind}:${name}`;
}
