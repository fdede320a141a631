-- The public SQL interface. Column names here are stable: docs/sql.md documents them and
-- test/integration/sql-views.test.ts runs the README's queries against them.

CREATE SCHEMA IF NOT EXISTS tapedeck;

-- Every stored span, whole.
CREATE VIEW tapedeck.spans AS
SELECT
  NULLIF(s.tenant, '')              AS tenant,
  encode(s.trace_id, 'hex')         AS trace_id,
  encode(s.span_id, 'hex')          AS span_id,
  encode(s.parent_span_id, 'hex')   AS parent_span_id,
  s.run_id                          AS run,
  s.name, s.kind, s.start_ns, s.end_ns, s.end_ns - s.start_ns AS duration_ns,
  s.status_code, s.status_message,
  s.attributes, s.events, s.links,
  s.resource AS resource_attributes,
  s.scope_name, s.scope_version, s.scope_attributes,
  s.service_name,
  s.trace_state, s.flags,
  s.dropped_attributes_count, s.dropped_events_count, s.dropped_links_count,
  s.received_at
FROM tapedeck_store.spans s;

-- Log records (GenAI content events), joinable to spans on (trace_id, span_id).
CREATE VIEW tapedeck.logs AS
SELECT
  NULLIF(l.tenant, '')            AS tenant,
  encode(l.trace_id, 'hex')       AS trace_id,
  encode(l.span_id, 'hex')        AS span_id,
  l.time_ns, l.observed_time_ns, l.severity_number, l.severity_text,
  l.event_name, l.body, l.attributes,
  l.resource AS resource_attributes, l.scope_name, l.scope_version, l.service_name,
  l.received_at
FROM tapedeck_store.logs l;

-- One row per step (llm, tool, agent) with its run, in stored form (payload references
-- are not resolved here).
CREATE VIEW tapedeck.tape_steps AS
SELECT
  NULLIF(st.tenant, '')           AS tenant,
  s.run_id                        AS run,
  encode(st.trace_id, 'hex')      AS trace_id,
  encode(st.span_id, 'hex')       AS span_id,
  encode(s.parent_span_id, 'hex') AS parent_span_id,
  st.kind, st.name, st.model, st.tool, st.tool_call_id, s.service_name AS service,
  s.start_ns, s.end_ns - s.start_ns AS duration_ns, st.status,
  st.request, st.response, st.request_digest, st.response_digest, st.fingerprint,
  st.tokens_input, st.tokens_output, st.tokens_cache_read, st.tokens_cache_write, st.tokens_context,
  st.params, st.layout, st.cost_usd, st.normalizer_version,
  st.tenant AS tenant_key  -- the tenant as stored ('' for none): filter on it to use the indexes
FROM tapedeck_store.steps st
JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id);

-- Each llm step's messages, one row per message: side is 'request' or 'response',
-- position is the message's place in its list. Offloaded lists appear as one row whose
-- payload_ref names the payload.
CREATE VIEW tapedeck.step_messages AS
SELECT
  ts.tenant, ts.run, ts.trace_id, ts.span_id, ts.kind, ts.name, ts.model,
  m.side, m.position - 1 AS position,
  m.message ->> 'role'          AS role,
  m.message -> 'content'        AS content,
  m.message ->> 'tool_call_id'  AS tool_call_id,
  m.message -> 'tool_calls'     AS tool_calls,
  m.message ->> 'finish_reason' AS finish_reason,
  m.message ->> '$payload'      AS payload_ref
FROM tapedeck.tape_steps ts
CROSS JOIN LATERAL (
  SELECT 'request' AS side, r.message, r.position
  FROM jsonb_array_elements(CASE WHEN jsonb_typeof(ts.request) = 'array' THEN ts.request ELSE '[]'::jsonb END)
       WITH ORDINALITY AS r(message, position)
  UNION ALL
  SELECT 'response', r.message, r.position
  FROM jsonb_array_elements(CASE WHEN jsonb_typeof(ts.response) = 'array' THEN ts.response ELSE '[]'::jsonb END)
       WITH ORDINALITY AS r(message, position)
) m
WHERE ts.kind = 'llm';

-- The steps a run's totals count: one per model call. An instrumentation's model span and
-- the provider SDK's own span nested directly inside it, with the same request (or one not
-- recorded), are one call (docs/architecture.md, "One call, two spans"); the inner one is folded into the outer, whose unset
-- token counts and cost it fills. (The tape assembler applies the same rule through any
-- context spans in between: src/tapes/collapse-duplicates.ts.)
CREATE VIEW tapedeck_store.run_steps AS
SELECT st.tenant, s.run_id, st.trace_id, st.span_id, st.kind, st.status, st.model,
       COALESCE(st.tokens_input, inner_call.tokens_input)             AS tokens_input,
       COALESCE(st.tokens_output, inner_call.tokens_output)           AS tokens_output,
       COALESCE(st.tokens_cache_read, inner_call.tokens_cache_read)   AS tokens_cache_read,
       COALESCE(st.tokens_cache_write, inner_call.tokens_cache_write) AS tokens_cache_write,
       COALESCE(st.cost_usd, inner_call.cost_usd)                     AS cost_usd
FROM tapedeck_store.steps st
JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id)
LEFT JOIN LATERAL (
  SELECT c.tokens_input, c.tokens_output, c.tokens_cache_read, c.tokens_cache_write, c.cost_usd
  FROM tapedeck_store.spans cs
  JOIN tapedeck_store.steps c USING (tenant, trace_id, span_id)
  WHERE st.kind = 'llm' AND cs.tenant = st.tenant AND cs.trace_id = st.trace_id AND cs.parent_span_id = st.span_id
    AND c.kind = 'llm'
    AND (c.request_digest IS NULL OR st.request_digest IS NULL OR c.request_digest = st.request_digest)
  LIMIT 1
) inner_call ON true
WHERE NOT EXISTS (
  SELECT 1 FROM tapedeck_store.steps p
  WHERE st.kind = 'llm' AND p.tenant = st.tenant AND p.trace_id = st.trace_id AND p.span_id = s.parent_span_id
    AND p.kind = 'llm'
    AND (p.request_digest IS NULL OR st.request_digest IS NULL OR p.request_digest = st.request_digest)
);

-- A run's outcome, one rule for every reader: 'unknown' while its last span ended within
-- the last 15 minutes (it may still be running); 'failure' when a span that starts the run
-- (no parent inside the run) or its last-ending span has status error; else 'success'.
CREATE FUNCTION tapedeck_store.run_outcome(p_tenant text, p_run text, p_last_end_ns bigint)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN p_last_end_ns > (extract(epoch FROM clock_timestamp()) * 1e9)::bigint - 900000000000 THEN 'unknown'
    WHEN EXISTS (
      SELECT 1 FROM tapedeck_store.spans s
      WHERE s.tenant = p_tenant AND s.run_id = p_run AND s.status_code = 'error'
        AND (s.end_ns = p_last_end_ns
             OR s.parent_span_id IS NULL
             OR NOT EXISTS (SELECT 1 FROM tapedeck_store.spans p
                            WHERE p.tenant = s.tenant AND p.trace_id = s.trace_id
                              AND p.span_id = s.parent_span_id AND p.run_id = s.run_id))
    ) THEN 'failure'
    ELSE 'success'
  END
$$;

-- One row per run: what GET /v1/runs serves.
CREATE VIEW tapedeck.runs AS
WITH span_totals AS (
  SELECT s.tenant, s.run_id,
         count(*)                                   AS spans,
         min(s.start_ns)                            AS first_start_ns,
         max(s.end_ns)                              AS last_end_ns,
         max(s.parent_run)                          AS parent_run,
         count(*) FILTER (WHERE s.status_code = 'error') AS error_spans
  FROM tapedeck_store.spans s
  WHERE s.run_id IS NOT NULL
  GROUP BY s.tenant, s.run_id
), step_totals AS (
  SELECT rs.tenant, rs.run_id,
         count(*)                                    AS steps,
         count(*) FILTER (WHERE rs.kind = 'llm')     AS llm_steps,
         count(*) FILTER (WHERE rs.kind = 'tool')    AS tool_steps,
         count(*) FILTER (WHERE rs.kind = 'agent')   AS agent_steps,
         count(*) FILTER (WHERE rs.status = 'error') AS errors,
         sum(rs.tokens_input)  FILTER (WHERE rs.kind = 'llm') AS tokens_input,
         sum(rs.tokens_output) FILTER (WHERE rs.kind = 'llm') AS tokens_output,
         sum(rs.tokens_cache_read)  FILTER (WHERE rs.kind = 'llm') AS tokens_cache_read,
         sum(rs.tokens_cache_write) FILTER (WHERE rs.kind = 'llm') AS tokens_cache_write,
         -- agent spans roll up the calls inside them: counting theirs would count twice
         sum(rs.cost_usd) FILTER (WHERE rs.kind <> 'agent') AS metered_cost_usd
  FROM tapedeck_store.run_steps rs
  GROUP BY rs.tenant, rs.run_id
)
SELECT
  NULLIF(t.tenant, '') AS tenant,
  t.run_id             AS run,
  t.parent_run,
  t.spans,
  COALESCE(st.steps, 0)      AS steps,
  COALESCE(st.llm_steps, 0)  AS llm_steps,
  COALESCE(st.tool_steps, 0) AS tool_steps,
  COALESCE(st.agent_steps, 0) AS agent_steps,
  COALESCE(st.errors, 0)     AS errors,
  t.error_spans,
  st.tokens_input, st.tokens_output, st.tokens_cache_read, st.tokens_cache_write,
  st.metered_cost_usd,
  t.first_start_ns, t.last_end_ns, t.last_end_ns - t.first_start_ns AS duration_ns,
  (SELECT s.service_name FROM tapedeck_store.spans s
    WHERE s.tenant = t.tenant AND s.run_id = t.run_id AND s.service_name IS NOT NULL
    ORDER BY s.start_ns LIMIT 1) AS service,
  tapedeck_store.run_outcome(t.tenant, t.run_id, t.last_end_ns) AS outcome,
  t.tenant AS tenant_key  -- the tenant as stored ('' for none): filter on it to use the indexes
FROM span_totals t
LEFT JOIN step_totals st ON st.tenant = t.tenant AND st.run_id = t.run_id;
