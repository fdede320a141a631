-- An answer is stored once with the history that resends it (src/tapes/answer-turns.ts). The
-- next call resends a step's answer without its finish_reason, so the two were two messages,
-- each with recall's words: a third of a short conversation's messages. The message store now
-- keeps the answer without it, and the step keeps each response message's finish_reason taken
-- out, in order (NULL where none was: a message stored whole); NULL for steps stored before.
ALTER TABLE tapedeck_store.steps ADD COLUMN response_finish_reasons text[];

-- The answer's canonical JSON again: the reason's member goes after a string content's member
-- and its comma, or first (the stored turn has no other member sorting before it).
CREATE FUNCTION tapedeck_store.with_finish_reason(p_turn text, p_reason text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT left(p_turn, p.n) || '"finish_reason":' || to_json(p_reason)::text || ',' || substr(p_turn, p.n + 1)
    FROM (SELECT length(substring(p_turn FROM '^\{(?:"content":"[^"\\]*(?:\\.[^"\\]*)*",)?')) AS n) p
$$;

-- Answers stored before become their turns the same way, where ingest would now store them
-- so: a message some step answered with, whose finish_reason (a string without escapes)
-- follows its string content or opens it and is followed by another member, in canonical
-- form (jsonb's rendering, of stores moved from jsonb columns, has a space after each colon
-- and never matches). The turn is the text without that member, and usually the history's
-- row already. Every statement reads the lists once, joined by (tenant, id) with the answers
-- found: a containment test per pair of answer and step grew with their product.
CREATE TEMP TABLE answer_turns ON COMMIT DROP AS
SELECT a.tenant, a.id, a.words, a.canonical, t.turn, sha256(convert_to(t.turn, 'UTF8')) AS digest, a.r[2] AS reason
  FROM (SELECT m.tenant, m.id, m.words, m.canonical,
               regexp_match(m.body, '^(\{(?:"content":"[^"\\]*(?:\\.[^"\\]*)*",)?)"finish_reason":"([^"\\]*)",(".*)$') AS r
          FROM (SELECT DISTINCT st.tenant, u.id
                  FROM tapedeck_store.steps st CROSS JOIN LATERAL unnest(st.response_messages) AS u(id)
                 WHERE st.response_messages IS NOT NULL) answered
          JOIN tapedeck_store.messages m ON m.tenant = answered.tenant AND m.id = answered.id
         WHERE strpos(m.body, '"finish_reason":"') > 0
        OFFSET 0) a  -- kept apart: each use of r would run the match again
 CROSS JOIN LATERAL (SELECT a.r[1] || a.r[3] AS turn) t
 WHERE a.r IS NOT NULL;

INSERT INTO tapedeck_store.messages (tenant, digest, body, words, canonical)
SELECT DISTINCT ON (tenant, digest) tenant, digest, turn, words, canonical FROM answer_turns
    ON CONFLICT (tenant, digest) DO NOTHING;

CREATE TEMP TABLE answer_ids ON COMMIT DROP AS
SELECT a.tenant, a.id, a.reason, m.id AS turn_id
  FROM answer_turns a
  JOIN tapedeck_store.messages m ON m.tenant = a.tenant AND m.digest = a.digest;
ANALYZE answer_ids;

UPDATE tapedeck_store.steps st
   SET response_messages = l.ids, response_finish_reasons = l.reasons
  FROM (SELECT s.tenant, s.trace_id, s.span_id,
               array_agg(coalesce(t.turn_id, u.id) ORDER BY u.n) AS ids,
               array_agg(t.reason ORDER BY u.n) AS reasons
          FROM tapedeck_store.steps s
         CROSS JOIN LATERAL unnest(s.response_messages) WITH ORDINALITY AS u(id, n)
          LEFT JOIN answer_ids t ON t.tenant = s.tenant AND t.id = u.id
         WHERE s.response_messages IS NOT NULL
         GROUP BY s.tenant, s.trace_id, s.span_id
        HAVING bool_or(t.id IS NOT NULL)) l
 WHERE st.tenant = l.tenant AND st.trace_id = l.trace_id AND st.span_id = l.span_id;

-- The answers as they were go unless a list still names one (a request that resent it whole).
DELETE FROM tapedeck_store.messages m
 USING answer_ids a
 WHERE m.tenant = a.tenant AND m.id = a.id
   AND NOT EXISTS (SELECT 1
                     FROM (SELECT DISTINCT st.tenant, u.id
                             FROM tapedeck_store.steps st
                            CROSS JOIN LATERAL unnest(coalesce(st.request_messages, '{}') || coalesce(st.response_messages, '{}')) AS u(id)
                             JOIN answer_ids n ON n.tenant = st.tenant AND n.id = u.id) named
                    WHERE named.tenant = a.tenant AND named.id = a.id);

-- step_body with the reasons of a response list (NULL for a request).
CREATE FUNCTION tapedeck_store.step_body(p_tenant text, p_text text, p_messages bigint[], p_reasons text[])
RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN p_messages IS NULL THEN p_text
    ELSE (SELECT '[' || string_agg(CASE WHEN p_reasons[u.n] IS NULL THEN m.body
                                        ELSE tapedeck_store.with_finish_reason(m.body, p_reasons[u.n]) END,
                                   ',' ORDER BY u.n) || ']'
            FROM unnest(p_messages) WITH ORDINALITY AS u(id, n)
            JOIN tapedeck_store.messages m ON m.tenant = p_tenant AND m.id = u.id)
  END
$$;

-- Replaced in place: its grants and the views of your own built on it stay.
CREATE OR REPLACE VIEW tapedeck.tape_steps WITH (security_invoker = true) AS
SELECT
  NULLIF(st.tenant, '')           AS tenant,
  s.run_id                        AS run,
  encode(st.trace_id, 'hex')      AS trace_id,
  encode(st.span_id, 'hex')       AS span_id,
  encode(s.parent_span_id, 'hex') AS parent_span_id,
  st.kind, st.name, st.model, st.tool, st.tool_call_id, s.service_name AS service,
  s.start_ns, s.end_ns - s.start_ns AS duration_ns, st.status,
  tapedeck_store.view_jsonb(tapedeck_store.step_body(st.tenant, st.request, st.request_messages, NULL)) AS request,
  tapedeck_store.view_jsonb(
    tapedeck_store.step_body(st.tenant, st.response, st.response_messages, st.response_finish_reasons)) AS response,
  st.request_digest, st.response_digest, st.fingerprint,
  st.tokens_input, st.tokens_output, st.tokens_cache_read, st.tokens_cache_write, st.tokens_context,
  st.params, st.layout, st.cost_usd, st.normalizer_version,
  st.tenant AS tenant_key  -- the tenant as stored ('' for none): filter on it to use the indexes
FROM tapedeck_store.steps st
JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id);

DROP FUNCTION tapedeck_store.step_body(text, text, bigint[]);
