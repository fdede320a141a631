/**
 * @module tapes/step-rows
 * Finished steps ⇄ rows of tapedeck_store.steps.
 */
import type { LayoutName, StepDraft, StepKind, StepStatus, Tokens } from '../normalize/step.js';
import type { JsonValue } from '../json/json-value.js';
import type { Column } from '../store/bulk-insert.js';
import { hexToBytes } from './span-rows.js';

/** A step as the writer stores it: the draft in stored (offloaded) form plus its identities. */
export interface StoredStep {
  traceId: string;
  spanId: string;
  draft: StepDraft;
  requestDigest: string | null;
  responseDigest: string | null;
  fingerprint: string;
  normalizerVersion: number;
  /** draft.request / draft.response as canonical JSON (UTF-8), when derive has it already (the text stored) */
  requestJson?: Uint8Array | null;
  responseJson?: Uint8Array | null;
}

function textOf(value: unknown): unknown {
  return value instanceof Uint8Array
    ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('utf8')
    : value;
}

export const stepColumns: readonly Column[] = [
  { name: 'tenant' },
  { name: 'trace_id', cast: 'bytea' },
  { name: 'span_id', cast: 'bytea' },
  { name: 'kind' },
  { name: 'name' },
  { name: 'model' },
  { name: 'tool' },
  { name: 'tool_call_id' },
  { name: 'status' },
  // text, not jsonb: the canonical JSON text as it is (0009_steps_request_as_text.sql); COPY
  // takes derive's UTF-8 bytes as they are, a query parameter their text
  { name: 'request', param: textOf },
  { name: 'response', param: textOf },
  { name: 'request_digest' },
  { name: 'response_digest' },
  { name: 'fingerprint' },
  { name: 'tokens_input', cast: 'bigint' },
  { name: 'tokens_output', cast: 'bigint' },
  { name: 'tokens_cache_read', cast: 'bigint' },
  { name: 'tokens_cache_write', cast: 'bigint' },
  { name: 'tokens_context', cast: 'bigint' },
  { name: 'params', cast: 'jsonb' },
  { name: 'layout' },
  { name: 'cost_usd', cast: 'double precision' },
  { name: 'normalizer_version', cast: 'integer' },
];

/** Re-deriving a step (late log records, a normalizer fix) replaces it. */
export const stepUpsertTail = `ON CONFLICT (tenant, trace_id, span_id) DO UPDATE SET
  ${stepColumns
    .slice(3)
    .map((c) => `${c.name} = EXCLUDED.${c.name}`)
    .join(', ')}`;

const json = (v: JsonValue | null): string | null => (v === null ? null : JSON.stringify(v));
const int = (v: number | null): string | null => (v === null ? null : String(Math.trunc(v)));

export function stepToRow(tenant: string, s: StoredStep): unknown[] {
  const d = s.draft;
  return [
    tenant,
    hexToBytes(s.traceId),
    hexToBytes(s.spanId),
    d.kind,
    d.name,
    d.model,
    d.tool,
    d.toolCallId ?? null,
    d.status,
    s.requestJson !== undefined ? s.requestJson : json(d.request),
    s.responseJson !== undefined ? s.responseJson : json(d.response),
    s.requestDigest,
    s.responseDigest,
    s.fingerprint,
    int(d.tokens.input),
    int(d.tokens.output),
    int(d.tokens.cache_read),
    int(d.tokens.cache_write),
    int(d.tokens.context),
    JSON.stringify(d.params),
    d.layout,
    d.costUsd,
    s.normalizerVersion,
  ];
}

/**
 * A step row as the tape reader selects it (the columns of the tape_steps view), with request
 * and response as stored: their JSON text (parse with storedJson).
 */
export interface StepViewRow {
  tenant: string | null;
  run: string;
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  kind: StepKind;
  name: string;
  model: string | null;
  tool: string | null;
  tool_call_id: string | null;
  service: string | null;
  start_ns: bigint;
  duration_ns: bigint;
  status: StepStatus;
  request: string | null;
  response: string | null;
  request_digest: string | null;
  response_digest: string | null;
  fingerprint: string;
  tokens_input: bigint | null;
  tokens_output: bigint | null;
  tokens_cache_read: bigint | null;
  tokens_cache_write: bigint | null;
  tokens_context: bigint | null;
  params: { [key: string]: JsonValue };
  layout: LayoutName;
  cost_usd: number | null;
}

export function tokensOf(r: StepViewRow): Tokens {
  const n = (v: bigint | null) => (v === null || v === undefined ? null : Number(v));
  return {
    input: n(r.tokens_input),
    output: n(r.tokens_output),
    cache_read: n(r.tokens_cache_read),
    cache_write: n(r.tokens_cache_write),
    context: n(r.tokens_context),
  };
}
