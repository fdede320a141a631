/**
 * @module tapes/tape-reader
 * Reads runs' stored steps (and the span tree around them) in start order: for each run the
 * first maxSpans spans, saying truncated past them, and the steps among those spans. Several
 * runs are read together (export pages, tree levels, recall); one run is the same read: two
 * statements with bodies as stored, one in outline.
 * The tables are queried with the tenant as stored, so the (tenant, run_id, start_ns) index
 * serves every read. Ordering ties and duplicate model spans are settled by assemble (pure).
 *
 * `bodies: 'outline'` reads a step's request and response cut down, in SQL, to what ordering
 * and duplicate folding look at (step-order.ts, collapse-duplicates.ts): a model call's
 * request keeps only its tool-result messages' ids, its response only the tool calls it asked
 * for; a tool step keeps its arguments; the rest is left out, a recorded value standing as an
 * empty list so that whether one was recorded still reads. The tape assembles in the same
 * order, without holding its prompts and answers: for callers that summarize a run.
 */
import type { Queryable } from '../store/database.js';
import type { LayoutName, StepKind, StepStatus, Tokens } from '../normalize/step.js';
import type { StepRow } from '../normalize/finish.js';
import { type JsonValue, storedJson } from '../json/json-value.js';
import { withFinishReasonFragments } from './answer-turns.js';
import { type JsonPiece, pieceText, RenderedJson } from '../json/canonical.js';

export interface SpanLink {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  start_ns: bigint;
  end_ns: bigint;
}

export interface RunRows {
  tenant: string | null;
  spansExamined: number;
  truncated: boolean;
  /** every span read (steps and context), for causality between steps */
  spans: SpanLink[];
  steps: StepRow[];
}

export const DEFAULT_MAX_TAPE_SPANS = 20_000;

/** A span row's link; its times come from the driver as text or numbers, read as bigints. */
function spanLinkOf(r: SpanLink): SpanLink {
  // PostgreSQL's driver reads them as bigints already (store/pg-database.ts): the row serves.
  if (typeof r.start_ns === 'bigint' && typeof r.end_ns === 'bigint') return r;
  return {
    trace_id: r.trace_id,
    span_id: r.span_id,
    parent_span_id: r.parent_span_id,
    start_ns: BigInt(r.start_ns),
    end_ns: BigInt(r.end_ns),
  };
}

/** The rows of each run that exists, by run id. */
export async function readRunsRows(
  db: Queryable,
  tenant: string,
  runs: readonly string[],
  options: { maxSpans: number; signal?: AbortSignal; bodies?: 'stored' | 'outline' },
): Promise<Map<string, RunRows>> {
  if (options.bodies === 'outline') return readOutlineRows(db, tenant, runs, options);
  const stored = await readStoredRows(db, tenant, runs, options);
  const byRun = new Map<string, RunRows>();
  for (const [run, rows] of stored) {
    const steps = rows.steps.map((s) => {
      s.row.request = storedJson(bodyText(s.request));
      s.row.response = storedJson(bodyText(s.response));
      return s.row;
    });
    byRun.set(run, { ...rows, steps });
  }
  return byRun;
}

/**
 * A step's request or response as stored: its JSON text, the texts of the messages of a
 * list kept in the message store (0020_message_store.sql) as the list they make, or null
 * (not recorded).
 */
export type StoredBody = string | RenderedJson | null;

/** The body's JSON text: a list's messages joined with commas in brackets, as step_body() joins them. */
export function bodyText(body: StoredBody): string | null {
  return body === null || typeof body === 'string' ? body : `[${body.pieces.map(pieceText).join(',')}]`;
}

export interface StoredStepRow {
  /** the step, its request and response (null here) still to be read from the stored bodies */
  row: StepRow;
  request: StoredBody;
  response: StoredBody;
}

export interface StoredRunRows extends Omit<RunRows, 'steps'> {
  steps: StoredStepRow[];
}

/** A span of the joined read, with its step's columns (null when it is not a step). */
type JoinedRow = Omit<StepColumns, 'kind'> & {
  /** not selected when one run is read */
  run?: string;
  position: number;
  kind: StepKind | null;
  request: string | null;
  response: string | null;
  request_messages: string | null;
  response_messages: string | null;
  /**
   * per response message, the finish_reason stored apart from it (answer-turns.ts), as a JSON
   * list: a run's steps mostly share one, parsed once (the driver parses a text[] per row)
   */
  response_finish_reasons?: string | null;
};

/**
 * A message list as text, its ids comma-separated ('' for an empty list): text reads quicker
 * than a bigint[], which the driver parses element by element.
 */
export function idsText(column: string): string {
  return `array_to_string(${column}, ',')`;
}

/**
 * Each run's spans with their steps, bodies as stored, in two queries: the first maxSpans
 * spans of each run (one more says truncated) joined to the steps among them, then the
 * messages those steps' lists name, each distinct message once. The rows come back unsorted
 * and are put in place by their position in the run; a list's messages are joined here, not
 * by step_body() in SQL, which looked them up again for every step that resends them.
 */
export async function readStoredRows(
  db: Queryable,
  tenant: string,
  runs: readonly string[],
  options: {
    maxSpans: number;
    signal?: AbortSignal;
    /**
     * applied once to each distinct message whose text was not written in canonical form
     * (0023_canonical_messages.sql), as it is read
     */
    messageText?: (text: string) => string;
  },
): Promise<Map<string, StoredRunRows>> {
  const byRun = new Map<string, StoredRunRows>();
  if (runs.length === 0) return byRun;
  // Rows of one run need not say whose they are, nor be partitioned by it: a partition sorts
  // the spans by run id first, comparing run ids (text, by collation) for nothing.
  const oneRun = runs.length === 1;
  const joined = await db.query<JoinedRow>(
    `SELECT ${oneRun ? '' : 's.run, '}s.position, encode(s.trace_id, 'hex') AS trace_id, encode(s.span_id, 'hex') AS span_id,
            encode(s.parent_span_id, 'hex') AS parent_span_id, s.start_ns, s.end_ns,
            ${STEP_COLUMNS}, s.service_name AS service, st.request, st.response,
            ${idsText('st.request_messages')} AS request_messages,
            ${idsText('st.response_messages')} AS response_messages,
            array_to_json(st.response_finish_reasons)::text AS response_finish_reasons
       FROM (SELECT run_id AS run, tenant, trace_id, span_id, parent_span_id, start_ns, end_ns, service_name,
                    (row_number() OVER (${oneRun ? '' : 'PARTITION BY run_id '}ORDER BY start_ns, span_id))::int AS position
               FROM tapedeck_store.spans
              WHERE tenant = $1 AND run_id = ANY($2::text[])) s
       LEFT JOIN tapedeck_store.steps st
         ON st.tenant = s.tenant AND st.trace_id = s.trace_id AND st.span_id = s.span_id
      WHERE s.position <= $3`,
    [tenant, runs, options.maxSpans + 1],
    { signal: options.signal },
  );
  options.signal?.throwIfAborted();
  // In start order within each run: the window's position, 1-based.
  const placed = new Map<string, number[]>();
  for (let i = 0; i < joined.length; i++) {
    const r = joined[i];
    const run = oneRun ? runs[0] : (r.run as string);
    let list = placed.get(run);
    if (!list) {
      // one run's rows are all its own: sized for them, whatever order they come in
      list = oneRun ? new Array(joined.length) : [];
      placed.set(run, list);
    }
    list[r.position - 1] = i;
  }
  // Message lists name their messages by id: each distinct one is read once.
  const requestIds: (number[] | null)[] = new Array(joined.length).fill(null);
  const responseIds: (number[] | null)[] = new Array(joined.length).fill(null);
  const ids = new Set<number>();
  for (let i = 0; i < joined.length; i++) {
    const r = joined[i];
    if (r.position > options.maxSpans) continue;
    requestIds[i] = idsOf(r.request_messages);
    responseIds[i] = idsOf(r.response_messages);
    for (const list of [requestIds[i], responseIds[i]]) if (list) for (const id of list) ids.add(id);
  }
  const bodies = await readMessages(db, tenant, ids, options.messageText, options.signal);
  const parsedReasons = new Map<string, (string | null)[]>();
  const reasonsOf = (json: string | null | undefined): (string | null)[] | undefined => {
    if (!json) return undefined;
    let reasons = parsedReasons.get(json);
    if (!reasons) {
      reasons = JSON.parse(json) as (string | null)[];
      parsedReasons.set(json, reasons);
    }
    return reasons;
  };
  const bodyOf = (text: string | null, list: number[] | null, reasons?: (string | null)[]): StoredBody => {
    if (list === null) return text;
    const messages: JsonPiece[] = new Array(list.length);
    let found = 0;
    for (let i = 0; i < list.length; i++) {
      const body = bodies.get(list[i]);
      if (body === undefined) continue; // as step_body's join: a message gone is left out
      const reason = reasons?.[i];
      messages[found++] = typeof reason === 'string' ? withFinishReasonFragments(body, reason) : body;
    }
    if (found === 0) return null;
    if (found < messages.length) messages.length = found;
    return new RenderedJson(messages, true);
  };
  const stepOf = stepRowsOf();
  for (const run of runs) {
    const list = placed.get(run);
    if (!list || byRun.has(run)) continue;
    const rows: StoredRunRows = { tenant: tenant || null, spansExamined: 0, truncated: false, spans: [], steps: [] };
    byRun.set(run, rows);
    for (const i of list) {
      if (rows.spans.length === options.maxSpans) {
        rows.truncated = true;
        break;
      }
      const r = joined[i];
      rows.spans.push(spanLinkOf(r));
      if (r.kind !== null) {
        rows.steps.push({
          row: stepOf(r as StepColumns),
          request: bodyOf(r.request, requestIds[i]),
          response: bodyOf(r.response, responseIds[i], reasonsOf(r.response_finish_reasons)),
        });
      }
    }
    rows.spansExamined = rows.spans.length;
  }
  return byRun;
}

/**
 * A message list's ids from its text (idsText; '' for an empty list), as numbers: a Map finds
 * a number quicker than the digit string split() would make, which it hashes first. Ids come
 * from an identity, far below 2^53, and are never empty.
 */
function idsOf(text: string | null): number[] | null {
  if (text === null) return null;
  return text === '' ? [] : (integersOf(text) as number[]);
}

/**
 * Comma-separated decimal integers, an empty one as null (idsText's lists, STEP_COLUMNS's
 * tokens), read by hand: quicker than split() and a Number() per piece.
 */
function integersOf(text: string): (number | null)[] {
  // sized first: most lists hold a few ids, and an array grown by push keeps room for more
  let count = 1;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) === 0x2c) count++;
  const out: (number | null)[] = new Array(count);
  let at = 0;
  let n: number | null = null;
  let sign = 1;
  for (let i = 0; i <= text.length; i++) {
    const c = i === text.length ? 0x2c : text.charCodeAt(i);
    if (c === 0x2c) {
      out[at++] = n === null ? null : sign * n;
      n = null;
      sign = 1;
    } else if (c === 0x2d) sign = -1;
    else n = (n ?? 0) * 10 + (c - 0x30);
  }
  return out;
}

/** Message texts by id, those not written canonical passed through messageText. */
async function readMessages(
  db: Queryable,
  tenant: string,
  ids: ReadonlySet<number>,
  messageText: ((text: string) => string) | undefined,
  signal: AbortSignal | undefined,
): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  if (ids.size === 0) return out;
  const rows = await db.query<{ id: string; body: string; canonical: boolean }>(
    `SELECT m.id::text AS id, m.body, m.canonical
       FROM tapedeck_store.messages m
      WHERE m.tenant = $1 AND m.id = ANY($2::bigint[])`,
    [tenant, `{${[...ids].join(',')}}`],
    { signal },
  );
  signal?.throwIfAborted();
  for (const r of rows) out.set(Number(r.id), messageText && !r.canonical ? messageText(r.body) : r.body);
  return out;
}

/**
 * The outline read (module comment): step_body in SQL, cut down there. One statement: each
 * run's first maxSpans spans (one more says truncated), in start order, each with its step's
 * columns when it is one (null when not).
 */
async function readOutlineRows(
  db: Queryable,
  tenant: string,
  runs: readonly string[],
  options: { maxSpans: number; signal?: AbortSignal },
): Promise<Map<string, RunRows>> {
  const byRun = new Map<string, RunRows>();
  if (runs.length === 0) return byRun;
  // one run's spans sorted without comparing its run id (readStoredRows)
  const oneRun = runs.length === 1;
  const rows = await db.query<Omit<JoinedRow, 'position' | 'request_messages' | 'response_messages'> & { run: string }>(
    `WITH sp AS MATERIALIZED (
       SELECT * FROM (SELECT run_id, tenant, trace_id, span_id, parent_span_id, start_ns, end_ns, service_name,
                             row_number() OVER (${oneRun ? '' : 'PARTITION BY run_id '}ORDER BY start_ns, span_id) AS position
                        FROM tapedeck_store.spans
                       WHERE tenant = $1 AND run_id = ANY($2::text[])) s
        WHERE position <= $3),
     st AS MATERIALIZED (
       SELECT st.*
         FROM sp JOIN tapedeck_store.steps st
           ON st.tenant = sp.tenant AND st.trace_id = sp.trace_id AND st.span_id = sp.span_id),
     ${LISTED_OUTLINES}
     SELECT sp.run_id AS run, encode(sp.trace_id, 'hex') AS trace_id, encode(sp.span_id, 'hex') AS span_id,
            encode(sp.parent_span_id, 'hex') AS parent_span_id, sp.start_ns, sp.end_ns,
            ${STEP_COLUMNS}, sp.service_name AS service, ${OUTLINE_BODIES}
       FROM sp
       LEFT JOIN st ON st.trace_id = sp.trace_id AND st.span_id = sp.span_id
       LEFT JOIN outlines ol ON ol.trace_id = sp.trace_id AND ol.span_id = sp.span_id
      ORDER BY ${oneRun ? '' : 'sp.run_id, '}sp.start_ns, sp.span_id`,
    [tenant, runs, options.maxSpans + 1],
    { signal: options.signal, prepared: true },
  );
  options.signal?.throwIfAborted();
  const stepOf = stepRowsOf();
  for (const r of rows) {
    let read = byRun.get(r.run);
    if (!read) {
      read = { tenant: tenant || null, spansExamined: 0, truncated: false, spans: [], steps: [] };
      byRun.set(r.run, read);
    }
    if (read.spans.length === options.maxSpans) {
      read.truncated = true;
      continue;
    }
    read.spans.push(spanLinkOf(r));
    read.spansExamined = read.spans.length;
    if (r.kind === null) continue;
    const step = stepOf(r as StepColumns);
    step.request = storedJson(r.request);
    step.response = storedJson(r.response);
    read.steps.push(step);
  }
  return byRun;
}

/**
 * The outlines of the steps' lists in the message store (CTEs over `st`, the steps read): each
 * message the lists hold read once and cut down (a conversation's calls share most of their
 * messages), then the kept messages of the lists that name one, in order. Read list by list, a
 * run of n calls looked up and parsed each message about n / 2 times; every list taken apart
 * whether it named a kept message or not cost a quarter of the statement (100 runs of 19 calls).
 */
const LISTED_OUTLINES = `outlined AS MATERIALIZED (
       SELECT msg.id,
              CASE WHEN json_typeof(j.m) = 'object' AND j.m ->> 'role' = 'tool' AND json_typeof(j.m -> 'tool_call_id') = 'string'
                   THEN json_build_object('role', 'tool', 'tool_call_id', j.m -> 'tool_call_id') END AS tool_result,
              CASE WHEN json_typeof(j.m) = 'object' AND json_typeof(j.m -> 'tool_calls') = 'array'
                   THEN json_build_object('tool_calls', j.m -> 'tool_calls') END AS tool_calls
         FROM (SELECT DISTINCT u.id
                 FROM st CROSS JOIN LATERAL unnest(coalesce(st.request_messages, '{}') || coalesce(st.response_messages, '{}')) AS u(id)) l
         JOIN tapedeck_store.messages msg ON msg.tenant = $1 AND msg.id = l.id
         CROSS JOIN LATERAL (SELECT msg.body::json AS m) j
        -- "tool" is in the text of every message kept (role tool, or tool_calls): most are not parsed
        WHERE strpos(msg.body, '"tool') > 0
          AND json_typeof(j.m) = 'object' AND (j.m ->> 'role' = 'tool' OR j.m -> 'tool_calls' IS NOT NULL)),
     kept AS (SELECT coalesce(array_agg(id), '{}') AS ids FROM outlined),
     -- only the lists naming a kept message are read message by message
     listed AS MATERIALIZED (
       SELECT st.trace_id, st.span_id, false AS response, u.n, u.id
         FROM st CROSS JOIN kept CROSS JOIN LATERAL unnest(st.request_messages) WITH ORDINALITY AS u(id, n)
        WHERE st.request_messages && kept.ids
       UNION ALL
       SELECT st.trace_id, st.span_id, true, u.n, u.id
         FROM st CROSS JOIN kept CROSS JOIN LATERAL unnest(st.response_messages) WITH ORDINALITY AS u(id, n)
        WHERE st.response_messages && kept.ids),
     outlines AS MATERIALIZED (
       SELECT l.trace_id, l.span_id,
              json_agg(o.tool_result ORDER BY l.n) FILTER (WHERE NOT l.response AND o.tool_result IS NOT NULL) AS request,
              json_agg(o.tool_calls ORDER BY l.n) FILTER (WHERE l.response AND o.tool_calls IS NOT NULL) AS response
         FROM listed l JOIN outlined o ON o.id = l.id
        GROUP BY l.trace_id, l.span_id)`;

/** The request and response columns of an outline read (module comment); stored as JSON text. */
const OUTLINE_BODIES = `CASE
         WHEN (st.request IS NULL AND st.request_messages IS NULL) OR st.kind = 'agent' THEN NULL
         WHEN st.kind = 'tool' THEN st.request
         WHEN st.request_messages IS NOT NULL THEN COALESCE(ol.request::text, '[]')
         WHEN json_typeof(st.request::json) <> 'array' THEN '[]'
         ELSE COALESCE((SELECT json_agg(json_build_object('role', 'tool', 'tool_call_id', m -> 'tool_call_id'))
                          FROM json_array_elements(st.request::json) AS m
                         WHERE json_typeof(m) = 'object' AND m ->> 'role' = 'tool'
                           AND json_typeof(m -> 'tool_call_id') = 'string')::text, '[]')
       END AS request,
       CASE
         WHEN (st.response IS NULL AND st.response_messages IS NULL) OR st.kind <> 'llm' THEN NULL
         WHEN st.response_messages IS NOT NULL THEN COALESCE(ol.response::text, '[]')
         WHEN json_typeof(st.response::json) <> 'array' THEN '[]'
         ELSE COALESCE((SELECT json_agg(json_build_object('tool_calls', m -> 'tool_calls'))
                          FROM json_array_elements(st.response::json) AS m
                         WHERE json_typeof(m) = 'object' AND json_typeof(m -> 'tool_calls') = 'array')::text, '[]')
       END AS response`;

/**
 * A step's columns as both reads select them (STEP_COLUMNS, with its span's), before they are
 * a StepRow.
 */
interface StepColumns {
  trace_id: string;
  span_id: string;
  parent_span_id: string | null;
  start_ns: bigint;
  end_ns: bigint;
  service: string | null;
  kind: StepKind;
  name: string;
  model: string | null;
  tool: string | null;
  tool_call_id: string | null;
  status: string;
  request_digest: string | null;
  response_digest: string | null;
  fingerprint: string;
  layout: LayoutName;
  cost_usd: number | null;
  /** the five token counts, comma-separated, each empty when not recorded */
  tokens: string;
  /** params as JSON text */
  params: string;
}

/**
 * The step columns of a read over tapedeck_store.steps aliased `st`. The token counts come as
 * one text and params as its JSON text: five bigints and a jsonb per row were most of what the
 * driver spent parsing a long tape's rows (docs/benchmarks.md, "Tape read"), and a run's
 * steps mostly share their params, parsed once (stepRowsOf).
 */
const STEP_COLUMNS = `st.kind, st.name, st.model, st.tool, st.tool_call_id, st.status,
            st.request_digest, st.response_digest, st.fingerprint, st.layout, st.cost_usd,
            concat(st.tokens_input, ',', st.tokens_output, ',', st.tokens_cache_read, ',',
                   st.tokens_cache_write, ',', st.tokens_context) AS tokens,
            st.params::text AS params`;

/**
 * Turns one read's rows into steps, request and response left null for the caller to fill
 * in; a params text seen before in the read is the same (read-only) object.
 */
function stepRowsOf(): (r: StepColumns) => StepRow {
  const paramsByText = new Map<string, { [key: string]: JsonValue }>();
  return (r) => {
    let params = paramsByText.get(r.params);
    if (params === undefined) {
      params = JSON.parse(r.params) as { [key: string]: JsonValue };
      paramsByText.set(r.params, params);
    }
    const startNs = BigInt(r.start_ns);
    return {
      kind: r.kind,
      name: r.name,
      model: r.model,
      tool: r.tool,
      tool_call_id: r.tool_call_id,
      service: r.service,
      trace_id: r.trace_id,
      span_id: r.span_id,
      parent_span_id: r.parent_span_id,
      start_ns: startNs,
      duration_ns: BigInt(r.end_ns) - startNs,
      status: r.status as StepStatus,
      request: null,
      response: null,
      request_digest: r.request_digest,
      response_digest: r.response_digest,
      fingerprint: r.fingerprint,
      tokens: tokensOf(r.tokens),
      params,
      layout: r.layout,
      cost_usd: r.cost_usd === null ? null : Number(r.cost_usd),
    };
  };
}

/** Token counts from their text (STEP_COLUMNS): five integers or empties, comma-separated. */
function tokensOf(text: string): Tokens {
  const counts = integersOf(text);
  return { input: counts[0], output: counts[1], cache_read: counts[2], cache_write: counts[3], context: counts[4] };
}
