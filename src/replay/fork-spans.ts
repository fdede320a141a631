/**
 * @module replay/fork-spans
 * Each model call a fork answers, as the span any instrumentation would have sent: an
 * OpenInference LLM span carrying the request body the agent sent and the response body it got
 * (a stream folded back into one: stream-assembly.ts), with its tokens. The store reads it
 * with the normalizer like every other span, so the fork's steps get the digests a replay of
 * the agent computes. It names the fork's run (`session.id`), its origin as parent run (so the
 * fork is a child in the run tree) and, for GET /v1/runs/{run}/forks, `tapedeck.fork.of` and
 * `tapedeck.fork.at_step`; `tapedeck.fork.source` says where the answer came from.
 */
import { randomBytes } from 'node:crypto';
import type { Attributes, SpanRecord } from '../spans/span-record.js';
import type { Wire } from './request-shapes.js';

export type ForkAnswerSource = 'recorded' | 'edited' | 'live';

export interface ForkCall {
  forkRun: string;
  origin: string;
  atStep: number;
  traceId: string;
  wire: Wire;
  source: ForkAnswerSource;
  /** the request body as the agent sent it */
  requestText: string;
  /** the answer as an unstreamed response body (JSON) */
  responseBody: unknown;
  startNs: bigint;
  endNs: bigint;
  /** an upstream's error answer: its HTTP status */
  errorStatus: number | null;
}

export function newForkTraceId(): string {
  return randomBytes(16).toString('hex');
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const count = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

export function forkCallSpan(call: ForkCall): SpanRecord {
  const body = isObj(call.responseBody) ? call.responseBody : {};
  let request: Obj = {};
  try {
    const parsed: unknown = JSON.parse(call.requestText);
    if (isObj(parsed)) request = parsed;
  } catch {
    // the request was read before it was served; it parses
  }
  const usage = isObj(body.usage) ? body.usage : {};
  const attributes: Attributes = {
    'openinference.span.kind': 'LLM',
    'session.id': call.forkRun,
    'tapedeck.parent_run': call.origin,
    'tapedeck.fork.of': call.origin,
    'tapedeck.fork.at_step': call.atStep,
    'tapedeck.fork.source': call.source,
    'llm.provider': call.wire,
    'input.value': call.requestText,
    'input.mime_type': 'application/json',
    'output.value': JSON.stringify(call.responseBody),
    'output.mime_type': 'application/json',
  };
  if (typeof request.model === 'string') attributes['llm.request.model_name'] = request.model;
  if (typeof body.model === 'string') attributes['llm.response.model_name'] = body.model;
  const input = count(usage.prompt_tokens) ?? count(usage.input_tokens);
  const output = count(usage.completion_tokens) ?? count(usage.output_tokens);
  if (input !== undefined) attributes['llm.token_count.prompt'] = input;
  if (output !== undefined) attributes['llm.token_count.completion'] = output;
  return {
    traceId: call.traceId,
    spanId: randomBytes(8).toString('hex'),
    parentSpanId: null,
    traceState: '',
    flags: 1,
    name: call.wire === 'openai' ? 'ChatCompletion' : 'Messages',
    kind: 'client',
    startTimeUnixNano: call.startNs,
    endTimeUnixNano: call.endNs > call.startNs ? call.endNs : call.startNs + 1n,
    attributes,
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status:
      call.errorStatus === null
        ? { code: 'ok', message: '' }
        : { code: 'error', message: `upstream answered ${call.errorStatus}` },
    resource: { 'service.name': 'tapedeck-fork' },
    resourceDroppedAttributesCount: 0,
    scope: { name: 'tapedeck.fork', version: '1', attributes: {} },
    serviceName: 'tapedeck-fork',
  };
}
