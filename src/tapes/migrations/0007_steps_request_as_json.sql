-- Steps keep their request and response as json, the canonical JSON text tapedeck computed
-- for their digests, instead of jsonb. Ingest hands PostgreSQL that text either way: as jsonb
-- the server parsed every prompt once more into its binary form (PostgreSQL 15's JSON lexer
-- copies string content a character at a time: a large share of the server's ingest CPU
-- with long prompts), as json it only checks it. Readers get the same values (json
-- and jsonb both come back parsed), and the public views still show jsonb: tape_steps casts,
-- so queries over tapedeck.tape_steps and tapedeck.step_messages read as before. Existing
-- rows are rewritten once, here, in jsonb's own rendering (any JSON text of a value reads
-- the same; digests were computed at ingest and are kept). Views of your own over
-- tape_steps or step_messages must be dropped before this migration and made again after.
DROP VIEW tapedeck.step_messages;
DROP VIEW tapedeck.tape_steps;

ALTER TABLE tapedeck_store.steps
  ALTER COLUMN request TYPE json USING request::json,
  ALTER COLUMN response TYPE json USING response::json;
-- A new column type takes the default compression again; lz4 where the server has it.
DO $$
BEGIN
  ALTER TABLE tapedeck_store.steps ALTER COLUMN request SET COMPRESSION lz4;
  ALTER TABLE tapedeck_store.steps ALTER COLUMN response SET COMPRESSION lz4;
EXCEPTION WHEN others THEN
  NULL;
END $$;

-- json keeps what jsonb refuses: the escapes \u0000 and unpaired surrogates (\ud800), which a
-- prompt may hold and canonical JSON writes as they are (jsonb refused such a step at
-- ingest). The views read steps through this, so one such step cannot make a query over them
-- fail: there those escapes read as U+FFFD. The stored text, and so the tape API, replay and
-- the digests, keep them.
CREATE FUNCTION tapedeck_store.view_jsonb(value json) RETURNS jsonb
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
BEGIN
  RETURN value::jsonb;
EXCEPTION WHEN others THEN
  RETURN regexp_replace(value::text, '\\u(0000|d[89a-f][0-9a-f]{2})', '\\ufffd', 'gi')::jsonb;
END $$;

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
  tapedeck_store.view_jsonb(st.request) AS request, tapedeck_store.view_jsonb(st.response) AS response, st.request_digest, st.response_digest, st.fingerprint,
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
