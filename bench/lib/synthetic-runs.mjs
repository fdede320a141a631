// Runs written straight into the store's tables with one SQL statement each for spans and
// steps (no normalizer, no ingest), fast enough for stores of 100k runs; the dataset and
// console benches and the export tests share them. Run i has shape SHAPES[i % 12]; each shape
// ends an export in a known way (expectedFate). Every run: an agent span (the root, own run
// `synth-<i>`, numbered from synth-0000000), a model call asking for get_weather, the tool,
// and a second model call answering, except where the shape says. They skip ingest, so
// recall's index does not hold them. Types: synthetic-runs.d.mts.

export const SHAPES = [
  'complete',
  'complete',
  'complete',
  'complete',
  'complete', // 0-4
  'no_input', //        5: content not recorded on the first call
  'cancelled', //       6: stops after the tool, no second model call → no_output
  'failure', //         7: the root span failed → outcome failure
  'recent', //          8: ended just now → outcome unknown → no_terminal
  'invalid', //         9: the last call was sent a tool result that answers no call → invalid_turns
  'truncated', //      10: the prompt is a payload the store does not hold → truncated
  'delta', //          11: tool call without id, second call sends only the result → exported
];

export const BASE_NS = 1_764_460_800_000_000_000n; // 2025-11-30T00:00:00Z
/** run i starts at BASE_NS + i ms (recent runs: now) */
export const startOf = (i) => BASE_NS + BigInt(i) * 1_000_000n;

/** What an export with the default filter (outcome success) makes of a shape. */
export function expectedFate(shape) {
  switch (shape) {
    case 'complete':
    case 'delta':
      return 'exported';
    case 'cancelled':
      return 'no_output';
    case 'failure':
      return 'outcome';
    case 'recent':
      return 'no_terminal';
    case 'invalid':
      return 'invalid_turns';
    default: // no_input, truncated
      return shape;
  }
}

const MISSING_PAYLOAD = `{"$payload": "sha256/${'0'.repeat(64)}"}`;

/** Inserts runs first..last (inclusive) under `tenant`; shape 8 ends at `nowNs`, the others long before. */
export async function insertSyntheticRuns(db, tenant, first, last, nowNs) {
  const runs = `SELECT i, i % 12 AS k, 'synth-' || lpad(i::text, 7, '0') AS run,
       decode(lpad(to_hex(i), 32, '0'), 'hex') AS trace_id,
       CASE WHEN i % 12 = 8 THEN $4::bigint ELSE $5::bigint + i::bigint * 1000000 END AS t0
     FROM generate_series($2::int, $3::int) AS i`;
  const spans = `SELECT r.*, j, decode(lpad(to_hex(j + 1), 16, '0'), 'hex') AS span_id
     FROM (${runs}) r CROSS JOIN generate_series(0, 3) AS j
     WHERE NOT (j = 3 AND r.k = 6)`;
  const params = [tenant, first, last, nowNs.toString(), BASE_NS.toString()];
  await db.query(
    `INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns,
       status_code, attributes, events, links, resource, own_run, run_id)
     SELECT $1, trace_id, span_id, CASE WHEN j = 0 THEN NULL ELSE decode('0000000000000001', 'hex') END,
       CASE j WHEN 0 THEN 'invoke_agent synth' WHEN 2 THEN 'execute_tool get_weather' ELSE 'chat gpt-4o-mini' END,
       CASE WHEN j IN (1, 3) THEN 'client' ELSE 'internal' END,
       t0 + j * 100000, t0 + CASE WHEN j = 0 THEN 900000 ELSE j * 100000 + 50000 END,
       CASE WHEN j = 0 AND k = 7 THEN 'error' ELSE 'unset' END,
       '{}', '[]', '[]', '{}', CASE WHEN j = 0 THEN run END, run
     FROM (${spans}) s`,
    params,
  );
  const sys = `jsonb_build_object('role', 'system', 'content', 'Be brief.')`;
  const user = `jsonb_build_object('role', 'user', 'content', 'Weather in Paris? #' || i)`;
  const callId = `CASE WHEN k = 11 THEN NULL ELSE 'call_' || i END`;
  const asked = `jsonb_strip_nulls(jsonb_build_object('role', 'assistant', 'tool_calls', jsonb_build_array(jsonb_strip_nulls(jsonb_build_object(
      'id', ${callId}, 'name', 'get_weather', 'arguments', jsonb_build_object('city', 'Paris'))))))`;
  const result = `jsonb_build_object('city', 'Paris', 'temperature_c', i % 30)`;
  const sent = `jsonb_strip_nulls(jsonb_build_object('role', 'tool', 'tool_call_id', ${callId}, 'content', ${result}))`;
  const answer = (text) =>
    `jsonb_build_array(jsonb_build_object('role', 'assistant', 'content', ${text}, 'finish_reason', 'stop'))`;
  await db.query(
    `INSERT INTO tapedeck_store.steps (tenant, trace_id, span_id, kind, name, model, tool, status, request, response,
       fingerprint, layout, normalizer_version)
     SELECT $1, trace_id, span_id,
       CASE j WHEN 0 THEN 'agent' WHEN 2 THEN 'tool' ELSE 'llm' END,
       CASE j WHEN 0 THEN 'synth' WHEN 2 THEN 'get_weather' ELSE 'chat gpt-4o-mini' END,
       CASE WHEN j IN (1, 3) THEN 'gpt-4o-mini' END,
       CASE WHEN j = 2 THEN 'get_weather' END,
       CASE WHEN j = 0 AND k = 7 THEN 'error' ELSE 'ok' END,
       CASE
         WHEN j = 0 THEN NULL
         WHEN j = 2 THEN jsonb_build_object('city', 'Paris')
         WHEN j = 1 AND k = 5 THEN NULL
         WHEN j = 1 AND k = 10 THEN '${MISSING_PAYLOAD}'::jsonb
         WHEN j = 1 THEN jsonb_build_array(${sys}, ${user})
         WHEN k = 9 THEN jsonb_build_array(${sys}, ${user}, jsonb_build_object('role', 'tool', 'tool_call_id', 'orphan', 'content', ${result}))
         WHEN k = 11 THEN jsonb_build_array(${sent})
         ELSE jsonb_build_array(${sys}, ${user}, ${asked}, ${sent})
       END,
       CASE
         WHEN j = 0 OR (j = 1 AND k = 5) THEN NULL
         WHEN j = 2 THEN ${result}
         WHEN j = 1 THEN jsonb_build_array(${asked} || '{"finish_reason": "tool_calls"}'::jsonb)
         ELSE ${answer(`'Paris is ' || (i % 30) || '°C.'`)}
       END,
       'x', 'otel-genai', 1
     FROM (${spans}) s`,
    params,
  );
}
