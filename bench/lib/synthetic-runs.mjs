// Runs written straight into the tables with SQL, fast enough for stores of 100k runs: four
// spans each (an agent, a model call asking for a tool, the tool, a model call answering),
// in twelve shapes in turn, as test/unit/runs/synthetic-runs.ts (dataset.mjs explains them).
// They skip ingest, so recall's index does not hold them. Run ids are synth-0000000 on.

const BASE_NS = 1_764_460_800_000_000_000n;

/** Runs number `first` to `last` (inclusive); shape 8 ends at `nowNs`, the others long before. */
export async function insertRuns(db, first, last, nowNs) {
  const runs = `SELECT i, i % 12 AS k, 'synth-' || lpad(i::text, 7, '0') AS run,
       decode(lpad(to_hex(i), 32, '0'), 'hex') AS trace_id,
       CASE WHEN i % 12 = 8 THEN $4::bigint ELSE $5::bigint + i::bigint * 1000000 END AS t0
     FROM generate_series($2::int, $3::int) AS i`;
  const spans = `SELECT r.*, j, decode(lpad(to_hex(j + 1), 16, '0'), 'hex') AS span_id
     FROM (${runs}) r CROSS JOIN generate_series(0, 3) AS j WHERE NOT (j = 3 AND r.k = 6)`;
  const params = ['', first, last, nowNs.toString(), BASE_NS.toString()];
  await db.query(
    `INSERT INTO tapedeck_store.spans (tenant, trace_id, span_id, parent_span_id, name, kind, start_ns, end_ns,
       status_code, attributes, events, links, resource, own_run, run_id)
     SELECT $1, trace_id, span_id, CASE WHEN j = 0 THEN NULL ELSE decode('0000000000000001', 'hex') END,
       CASE j WHEN 0 THEN 'invoke_agent synth' WHEN 2 THEN 'execute_tool get_weather' ELSE 'chat gpt-4o-mini' END,
       CASE WHEN j IN (1, 3) THEN 'client' ELSE 'internal' END,
       t0 + j * 100000, t0 + CASE WHEN j = 0 THEN 900000 ELSE j * 100000 + 50000 END,
       CASE WHEN j = 0 AND k = 7 THEN 'error' ELSE 'unset' END, '{}', '[]', '[]', '{}', CASE WHEN j = 0 THEN run END, run
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
       CASE WHEN j IN (1, 3) THEN 'gpt-4o-mini' END, CASE WHEN j = 2 THEN 'get_weather' END,
       CASE WHEN j = 0 AND k = 7 THEN 'error' ELSE 'ok' END,
       CASE
         WHEN j = 0 THEN NULL
         WHEN j = 2 THEN jsonb_build_object('city', 'Paris')
         WHEN j = 1 AND k = 5 THEN NULL
         WHEN j = 1 AND k = 10 THEN '{"$payload": "sha256/${'0'.repeat(64)}"}'::jsonb
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
