/**
 * @module tapes/tape-json
 * A tape as the JSON GET /v1/tapes/{run} answers, written from the stored text. Steps keep
 * their request, response and messages as canonical JSON text, which is what the renderer
 * writes for the values they spell; so the answer splices that text in as it is rather than
 * parsing it into objects and writing them out again (docs/benchmarks.md, "Tape read").
 * Text in another rendering (a store migrated from jsonb columns keeps jsonb's) is rendered
 * again, once per text (a message, only when the store does not know it canonical); the
 * answer is byte for byte what rendering the parsed tape gives (renderJsonBytes over
 * tape-service's readTape), which the tests hold it to.
 *
 * Ordering and duplicate folding (assemble.ts) read little of a step's bodies: whether one
 * was recorded, the tool calls a model answer asked for, the tool results a prompt carries,
 * a tool step's arguments when it recorded no call id. Only the texts that can hold those
 * are parsed; the rest stand as an empty list, as an outline read has them (tape-reader.ts).
 */
import { isCanonicalJsonText } from '../json/canonical-text.js';
import { pieceText, RenderedJson, renderJson } from '../json/canonical.js';
import { JsonBytesWriter } from '../json/json-bytes-writer.js';
import type { JsonValue } from '../json/json-value.js';
import type { StepKind, Tokens } from '../normalize/step.js';
import { orderedSteps, type StepRow } from './assemble.js';
import { spanKey } from './span-tree.js';
import {
  bodyText,
  DEFAULT_MAX_TAPE_SPANS,
  readStoredRows,
  type StoredBody,
  type StoredRunRows,
} from './tape-reader.js';
import type { TapeDeps } from './tape-service.js';

/** Bytes of the answer taken at a time: the first is sent while the next is written. */
const CHUNK_BYTES = 512 * 1024;

/**
 * A tape's answer a chunk at a time. A sender that knows when a chunk's bytes have gone (a
 * socket write's callback) hands the chunk back, and its buffer is written again.
 */
export interface TapeChunks extends Iterable<Buffer> {
  recycle(chunk: Uint8Array): void;
}

/**
 * The tape's JSON (UTF-8) in chunks, or undefined when the run does not exist. The rows are
 * read, and the steps ordered, before this resolves; the chunks are written as they are
 * asked for, so an answer of megabytes is sent while the rest of it is written.
 */
export async function readTapeJson(
  deps: Pick<TapeDeps, 'db'>,
  tenant: string,
  run: string,
  options: { maxSpans?: number; signal?: AbortSignal; chunkBytes?: number } = {},
): Promise<TapeChunks | undefined> {
  const rows = (
    await readStoredRows(deps.db, tenant, [run], {
      maxSpans: options.maxSpans ?? DEFAULT_MAX_TAPE_SPANS,
      signal: options.signal,
      // a message not written canonical (0023_canonical_messages.sql), rendered again once
      messageText: canonicalText,
    })
  ).get(run);
  if (!rows) return undefined;
  const rendered = (body: StoredBody): RenderedJson | null => {
    if (body === null) return null;
    return typeof body === 'string' ? new RenderedJson([canonicalText(body)], false) : body;
  };
  const bodies = new Map<StepRow, Bodies>();
  const outlined = rows.steps.map(({ row, request, response }) => {
    bodies.set(row, { request: rendered(request), response: rendered(response) });
    row.request = outline(row.kind, request, 'request', row.tool_call_id ?? null);
    row.response = outline(row.kind, response, 'response', null);
    return row;
  });
  const steps = orderedSteps({ steps: outlined, spans: rows.spans });
  // A folded pair of model spans is a new step object (collapse-duplicates.ts): found by its ids.
  let byKey: Map<string, Bodies> | undefined;
  const bodiesOf = (step: StepRow): Bodies | undefined => {
    const own = bodies.get(step);
    if (own) return own;
    byKey ??= new Map([...bodies].map(([row, b]) => [spanKey(row.trace_id, row.span_id), b]));
    return byKey.get(spanKey(step.trace_id, step.span_id));
  };
  const writer = new JsonBytesWriter(options.chunkBytes ?? CHUNK_BYTES);
  const chunks = tapeChunks(writer, run, rows, steps, bodiesOf);
  return { [Symbol.iterator]: () => chunks, recycle: (chunk) => writer.recycle(chunk) };
}

type Bodies = { request: RenderedJson | null; response: RenderedJson | null };

/** The tape's members in sorted order, as renderJson writes a Tape (tape-service.ts), a chunk at a time. */
function* tapeChunks(
  w: JsonBytesWriter,
  run: string,
  rows: Pick<StoredRunRows, 'spansExamined' | 'tenant' | 'truncated'>,
  steps: readonly StepRow[],
  bodiesOf: (step: StepRow) => Bodies | undefined,
): Generator<Buffer, void, undefined> {
  const paramsRendered = new Map<StepRow['params'], string>();
  const paramsJson = (params: StepRow['params']): string => {
    let text = paramsRendered.get(params);
    if (text === undefined) {
      text = renderJson(params);
      paramsRendered.set(params, text);
    }
    return text;
  };
  w.raw('{"run":');
  w.value(run);
  w.raw(',"spans_examined":');
  w.value(rows.spansExamined);
  w.raw(',"steps":[');
  for (let index = 0; index < steps.length; index++) {
    const step = steps[index];
    const stored = bodiesOf(step);
    if (index > 0) w.raw(',');
    writeStep(w, step, index, stored?.request ?? null, stored?.response ?? null, paramsJson);
    if (w.full) yield w.take();
  }
  w.raw('],"tenant":');
  w.value(rows.tenant);
  w.raw(',"truncated":');
  w.value(rows.truncated);
  w.raw('}');
  yield w.take();
}

/**
 * One step's members in sorted order, as renderJson writes a Step: a tool_call_id only when
 * recorded (assemble-run.ts), request and response as their stored text, params as their
 * rendering, made once per object (a run's steps share theirs: tape-reader.ts).
 */
function writeStep(
  w: JsonBytesWriter,
  s: StepRow,
  index: number,
  request: RenderedJson | null,
  response: RenderedJson | null,
  paramsJson: (params: StepRow['params']) => string,
): void {
  w.ascii('{"cost_usd":');
  w.number(s.cost_usd);
  w.ascii(',"duration_ns":');
  w.number(s.duration_ns);
  w.ascii(',"fingerprint":');
  w.string(s.fingerprint);
  w.ascii(',"index":');
  w.number(index);
  w.ascii(',"kind":');
  w.string(s.kind);
  w.ascii(',"layout":');
  w.string(s.layout);
  w.ascii(',"model":');
  w.string(s.model);
  w.ascii(',"name":');
  w.string(s.name);
  w.ascii(',"params":');
  w.raw(paramsJson(s.params));
  w.ascii(',"parent_span_id":');
  w.string(s.parent_span_id);
  w.ascii(',"request":');
  w.rendered(request);
  w.ascii(',"request_digest":');
  w.string(s.request_digest);
  w.ascii(',"response":');
  w.rendered(response);
  w.ascii(',"response_digest":');
  w.string(s.response_digest);
  w.ascii(',"service":');
  w.string(s.service);
  w.ascii(',"span_id":');
  w.string(s.span_id);
  w.ascii(',"start_ns":');
  w.number(s.start_ns);
  w.ascii(',"status":');
  w.string(s.status);
  w.ascii(',"tokens":');
  writeTokens(w, s.tokens);
  w.ascii(',"tool":');
  w.string(s.tool);
  if (s.tool_call_id !== null && s.tool_call_id !== undefined) {
    w.ascii(',"tool_call_id":');
    w.string(s.tool_call_id);
  }
  w.ascii(',"trace_id":');
  w.string(s.trace_id);
  w.ascii('}');
}

/** Token counts in renderJson's member order; one with a count left undefined is rendered as renderJson would. */
function writeTokens(w: JsonBytesWriter, t: Tokens): void {
  const { cache_read, cache_write, context, input, output } = t;
  if (
    cache_read === undefined ||
    cache_write === undefined ||
    context === undefined ||
    input === undefined ||
    output === undefined
  ) {
    w.value(t);
    return;
  }
  w.ascii('{"cache_read":');
  w.number(cache_read);
  w.ascii(',"cache_write":');
  w.number(cache_write);
  w.ascii(',"context":');
  w.number(context);
  w.ascii(',"input":');
  w.number(input);
  w.ascii(',"output":');
  w.number(output);
  w.ascii('}');
}

/** Stored text in the renderer's form: as it is when canonical, else rendered again. */
function canonicalText(text: string): string {
  return isCanonicalJsonText(text) ? text : renderJson(JSON.parse(text));
}

/** What a tool-result message and a tool call are spelled with, in any rendering of them. */
const NEEDS = { request: '"tool_call_id"', response: '"tool_calls"' } as const;

/**
 * A body as assembly reads it: null when not recorded; a model step's messages that can name
 * a tool call (the rest left out); a tool step's arguments when it recorded no call id (it is
 * matched by them); else an empty list.
 */
function outline(
  kind: StepKind,
  body: StoredBody,
  side: 'request' | 'response',
  toolCallId: string | null,
): JsonValue | null {
  if (body === null) return null;
  if (kind === 'tool' && side === 'request' && !toolCallId) return JSON.parse(bodyText(body) as string);
  if (kind !== 'llm') return NOTHING_READ;
  const needle = NEEDS[side];
  if (typeof body === 'string') return body.includes(needle) ? (JSON.parse(body) as JsonValue) : NOTHING_READ;
  const messages: JsonValue[] = [];
  for (const m of body.pieces)
    if (typeof m === 'string' ? m.includes(needle) : m.some((f) => f.includes(needle)))
      messages.push(JSON.parse(pieceText(m)) as JsonValue);
  return messages.length > 0 ? messages : NOTHING_READ;
}

/**
 * A recorded body with nothing assembly reads: one list for every step (assembly only reads
 * them), so a long tape does not hold two empty lists a step.
 */
const NOTHING_READ: JsonValue = Object.freeze([]) as unknown as JsonValue;
