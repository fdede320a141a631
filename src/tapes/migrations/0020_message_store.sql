-- Agents resend a conversation's whole history on every model call: stored whole, a run's
-- steps grow with the square of its length. A model step's message lists are stored here
-- instead, each distinct message once per tenant, keyed by the SHA-256 of its canonical JSON
-- text (exactly the text the step's list held for it); the step keeps the digests in order
-- (request_messages, response_messages) and its request / response column is NULL.
-- Values offloaded to the payload store, and every other value, stay in the step as before.
CREATE TABLE tapedeck_store.messages (
  tenant  text  NOT NULL DEFAULT '',
  digest  bytea NOT NULL,
  body    text  NOT NULL,
  PRIMARY KEY (tenant, digest)
);
DO $$
BEGIN
  ALTER TABLE tapedeck_store.messages ALTER COLUMN body SET COMPRESSION lz4;
EXCEPTION WHEN others THEN
  NULL;
END $$;

ALTER TABLE tapedeck_store.steps
  ADD COLUMN request_messages bytea[],
  ADD COLUMN response_messages bytea[];

-- "Does any step still reference this message?" (erasure and retention, src/erasure/).
CREATE INDEX steps_request_messages_idx ON tapedeck_store.steps USING gin (request_messages)
  WHERE request_messages IS NOT NULL;
CREATE INDEX steps_response_messages_idx ON tapedeck_store.steps USING gin (response_messages)
  WHERE response_messages IS NOT NULL;

-- A step's request or response as its JSON text: the stored text, or its messages joined
-- back into the list they came from (canonical JSON has no space between elements, so the
-- text is the one the step held before).
CREATE FUNCTION tapedeck_store.step_body(p_tenant text, p_text text, p_messages bytea[]) RETURNS text
LANGUAGE sql STABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN p_messages IS NULL THEN p_text
    ELSE (SELECT '[' || string_agg(m.body, ',' ORDER BY u.n) || ']'
            FROM unnest(p_messages) WITH ORDINALITY AS u(digest, n)
            JOIN tapedeck_store.messages m ON m.tenant = p_tenant AND m.digest = u.digest)
  END
$$;

-- Existing model steps move their lists here. Only a list whose elements are objects, none
-- with a "$payload" key (canonical JSON sorts it first), and whose elements joined back give
-- its text exactly (text written in another rendering stays as it is) is moved. Nothing here
-- reads inside a string, so escapes jsonb refuses (\u0000) move as they are.
CREATE TEMP TABLE moved_lists ON COMMIT DROP AS
SELECT st.tenant, st.trace_id, st.span_id, l.side, l.digests
  FROM tapedeck_store.steps st
  CROSS JOIN LATERAL (
    SELECT 'request' AS side, st.request AS list
    UNION ALL SELECT 'response', st.response
  ) v
  CROSS JOIN LATERAL (
    SELECT v.side,
           array_agg(sha256(convert_to(e.value::text, 'UTF8')) ORDER BY e.n) AS digests,
           '[' || string_agg(e.value::text, ',' ORDER BY e.n) || ']' AS joined,
           bool_and(json_typeof(e.value) = 'object' AND left(e.value::text, 12) <> '{"$payload":') AS messages
      FROM json_array_elements(
             CASE WHEN st.kind = 'llm' AND left(v.list, 1) = '[' THEN v.list::json ELSE '[]' END
           ) WITH ORDINALITY AS e(value, n)
  ) l
 WHERE l.messages AND l.joined = v.list;

INSERT INTO tapedeck_store.messages (tenant, digest, body)
SELECT st.tenant, sha256(convert_to(e.value::text, 'UTF8')), e.value::text
  FROM moved_lists ml
  JOIN tapedeck_store.steps st USING (tenant, trace_id, span_id)
  CROSS JOIN LATERAL json_array_elements(
    (CASE WHEN ml.side = 'request' THEN st.request ELSE st.response END)::json) AS e(value)
ON CONFLICT DO NOTHING;

UPDATE tapedeck_store.steps st SET request = NULL, request_messages = ml.digests
  FROM moved_lists ml
 WHERE ml.side = 'request' AND st.tenant = ml.tenant AND st.trace_id = ml.trace_id AND st.span_id = ml.span_id;
UPDATE tapedeck_store.steps st SET response = NULL, response_messages = ml.digests
  FROM moved_lists ml
 WHERE ml.side = 'response' AND st.tenant = ml.tenant AND st.trace_id = ml.trace_id AND st.span_id = ml.span_id;

-- Tenant roles (0013) read the messages through the views as themselves: the same policy,
-- and SELECT for every role that may read the steps.
ALTER TABLE tapedeck_store.messages ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON tapedeck_store.messages
  USING (tenant IS NOT DISTINCT FROM COALESCE(tapedeck_store.tenant_of_role(current_user), tenant));
DO $$
DECLARE g record;
BEGIN
  FOR g IN SELECT DISTINCT a.grantee FROM pg_class c, aclexplode(c.relacl) a
            WHERE c.oid = 'tapedeck_store.steps'::regclass AND a.privilege_type = 'SELECT'
              AND a.grantee <> c.relowner LOOP
    EXECUTE format('GRANT SELECT ON tapedeck_store.messages TO %s',
                   CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
  END LOOP;
END $$;

-- The views read the lists back whole, so they show what they showed before; replaced in
-- place, they keep their grants and the views of your own built on them.
CREATE OR REPLACE VIEW tapedeck.tape_steps WITH (security_invoker = true) AS
SELECT
  NULLIF(st.tenant, '')           AS tenant,
  s.run_id                        AS run,
  encode(st.trace_id, 'hex')      AS trace_id,
  encode(st.span_id, 'hex')       AS span_id,
  encode(s.parent_span_id, 'hex') AS parent_span_id,
  st.kind, st.name, st.model, st.tool, st.tool_call_id, s.service_name AS service,
  s.start_ns, s.end_ns - s.start_ns AS duration_ns, st.status,
  tapedeck_store.view_jsonb(tapedeck_store.step_body(st.tenant, st.request, st.request_messages)) AS request,
  tapedeck_store.view_jsonb(tapedeck_store.step_body(st.tenant, st.response, st.response_messages)) AS response,
  st.request_digest, st.response_digest, st.fingerprint,
  st.tokens_input, st.tokens_output, st.tokens_cache_read, st.tokens_cache_write, st.tokens_context,
  st.params, st.layout, st.cost_usd, st.normalizer_version,
  st.tenant AS tenant_key  -- the tenant as stored ('' for none): filter on it to use the indexes
FROM tapedeck_store.steps st
JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id);

-- Run totals weigh a step's recorded request and response (0016): a list in the message store
-- is recorded as much as one in the step.
CREATE OR REPLACE FUNCTION tapedeck_store.run_step_rows(p_tenant text, p_run text)
RETURNS TABLE (trace_id bytea, span_id bytea, kind text, status text, model text,
               tokens_input bigint, tokens_output bigint, tokens_cache_read bigint,
               tokens_cache_write bigint, cost_usd double precision)
LANGUAGE plpgsql STABLE AS $$
#variable_conflict use_column
BEGIN
  RETURN QUERY
    WITH RECURSIVE span AS (
      SELECT s.trace_id, s.span_id, s.parent_span_id, s.start_ns
        FROM tapedeck_store.spans s
       WHERE s.tenant = p_tenant AND s.run_id = p_run
    ), step AS (
      SELECT st.trace_id, st.span_id, span.parent_span_id, span.start_ns, st.kind, st.status, st.model,
             st.request_digest, st.tokens_input, st.tokens_output, st.tokens_cache_read, st.tokens_cache_write,
             st.cost_usd,
             CASE WHEN st.request IS NULL AND st.request_messages IS NULL THEN 0 ELSE 8 END
               + CASE WHEN st.response IS NULL AND st.response_messages IS NULL THEN 0 ELSE 8 END
               + num_nonnulls(st.model, st.tokens_input, st.tokens_output, st.tokens_cache_read,
                              st.tokens_cache_write, st.tokens_context) AS completeness
        FROM span
        JOIN tapedeck_store.steps st ON st.tenant = p_tenant AND st.trace_id = span.trace_id AND st.span_id = span.span_id
    ), up(trace_id, span_id, at, depth) AS (
      -- each model step's ancestors in the run, through context spans, up to the nearest step
      -- (at most 1000: bad input may hold a parent cycle)
      SELECT l.trace_id, l.span_id, l.parent_span_id, 1 FROM step l WHERE l.kind = 'llm'
      UNION ALL
      SELECT up.trace_id, up.span_id, p.parent_span_id, up.depth + 1
        FROM up
        JOIN span p ON p.trace_id = up.trace_id AND p.span_id = up.at
       WHERE up.depth < 1000
         AND NOT EXISTS (SELECT 1 FROM step WHERE step.trace_id = up.trace_id AND step.span_id = up.at)
    ), enclosed AS MATERIALIZED (
      -- a model step, its nearest enclosing step, and how many model steps that step encloses
      SELECT up.trace_id, up.span_id, up.at AS outer_id,
             count(*) OVER (PARTITION BY up.trace_id, up.at) AS calls_enclosed
        FROM up
        JOIN step o ON o.trace_id = up.trace_id AND o.span_id = up.at
    ), fold AS (
      -- the inner span of each one-to-one pair that is one call
      SELECT e.trace_id, e.span_id, e.outer_id
        FROM enclosed e
        JOIN step i ON i.trace_id = e.trace_id AND i.span_id = e.span_id
        JOIN step o ON o.trace_id = e.trace_id AND o.span_id = e.outer_id
       WHERE e.calls_enclosed = 1 AND o.kind = 'llm'
         AND (i.request_digest IS NULL OR o.request_digest IS NULL OR i.request_digest = o.request_digest)
    ), chain(trace_id, head, span_id, depth) AS (
      -- each outermost span with a span folded into it, and the chain folded into it
      SELECT h.trace_id, h.span_id, h.span_id, 0
        FROM step h
       WHERE EXISTS (SELECT 1 FROM fold f WHERE f.trace_id = h.trace_id AND f.outer_id = h.span_id)
         AND NOT EXISTS (SELECT 1 FROM fold f WHERE f.trace_id = h.trace_id AND f.span_id = h.span_id)
      UNION ALL
      SELECT c.trace_id, c.head, f.span_id, c.depth + 1
        FROM chain c
        JOIN fold f ON f.trace_id = c.trace_id AND f.outer_id = c.span_id
       WHERE c.depth < 1000
    ), member AS (
      SELECT c.head, c.depth, m.*,
             row_number() OVER (PARTITION BY c.trace_id, c.head
                                ORDER BY m.completeness DESC, c.depth = 0 DESC, m.start_ns, m.span_id) > 1 AS merged
        FROM chain c
        JOIN step m ON m.trace_id = c.trace_id AND m.span_id = c.span_id
    )
    SELECT member.trace_id, member.head AS span_id,
      min(member.kind) FILTER (WHERE member.depth = 0) AS kind,
      CASE max(CASE member.status WHEN 'error' THEN 2 WHEN 'ok' THEN 1 ELSE 0 END)
        WHEN 2 THEN 'error' WHEN 1 THEN 'ok' ELSE 'unset' END AS status,
      (array_agg(member.model ORDER BY member.merged, member.start_ns, member.span_id)
         FILTER (WHERE member.model IS NOT NULL))[1] AS model,
      (array_agg(member.tokens_input ORDER BY member.merged, member.start_ns, member.span_id)
         FILTER (WHERE member.tokens_input IS NOT NULL))[1] AS tokens_input,
      (array_agg(member.tokens_output ORDER BY member.merged, member.start_ns, member.span_id)
         FILTER (WHERE member.tokens_output IS NOT NULL))[1] AS tokens_output,
      (array_agg(member.tokens_cache_read ORDER BY member.merged, member.start_ns, member.span_id)
         FILTER (WHERE member.tokens_cache_read IS NOT NULL))[1] AS tokens_cache_read,
      (array_agg(member.tokens_cache_write ORDER BY member.merged, member.start_ns, member.span_id)
         FILTER (WHERE member.tokens_cache_write IS NOT NULL))[1] AS tokens_cache_write,
      (array_agg(member.cost_usd ORDER BY member.merged, member.start_ns, member.span_id)
         FILTER (WHERE member.cost_usd IS NOT NULL))[1] AS cost_usd
    FROM member
    GROUP BY member.trace_id, member.head
    UNION ALL
    -- every other step stands alone, as recorded
    SELECT s.trace_id, s.span_id, s.kind, s.status, s.model, s.tokens_input, s.tokens_output,
           s.tokens_cache_read, s.tokens_cache_write, s.cost_usd
      FROM step s
     WHERE NOT EXISTS (SELECT 1 FROM fold f WHERE f.trace_id = s.trace_id AND (f.span_id = s.span_id OR f.outer_id = s.span_id));
END
$$;
