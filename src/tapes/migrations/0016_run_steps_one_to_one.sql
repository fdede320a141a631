-- Run totals count the steps the tape shows (src/tapes/collapse-duplicates.ts, the same
-- rule): a model call recorded by two spans, an instrumentation's and the provider SDK's
-- nested in it, counts once; but a model span that encloses several model calls (a wrapper
-- with no content of its own) is not any one of them, so none folds into it. The nearest
-- enclosing step is found across context spans of the run, as the tape's span tree walks
-- them, no longer among direct parents only; a chain of such spans folds into its outermost,
-- which takes, as the tape does, the values of the most complete of its spans (recorded
-- request and response first, then model and token counts; the outermost on a tie), a value
-- only another span recorded filling its nulls (in start order), and the more informative
-- status (error, else ok, else unset).
--
-- Each run is worked out on its own, from its spans (spans_run_idx), so a filter on the run
-- (tapedeck.runs for one run, run costs for a page) reads only that run's rows. The work is
-- a PL/pgSQL function so that its plan is made once per connection, not with every query
-- of the view.
CREATE FUNCTION tapedeck_store.run_step_rows(p_tenant text, p_run text)
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
             CASE WHEN st.request IS NULL THEN 0 ELSE 8 END + CASE WHEN st.response IS NULL THEN 0 ELSE 8 END
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

CREATE OR REPLACE VIEW tapedeck_store.run_steps WITH (security_invoker = true) AS
SELECT r.tenant, r.run_id, x.trace_id, x.span_id, x.kind, x.status, x.model,
       x.tokens_input, x.tokens_output, x.tokens_cache_read, x.tokens_cache_write, x.cost_usd
FROM (SELECT DISTINCT s.tenant, s.run_id FROM tapedeck_store.spans s WHERE s.run_id IS NOT NULL) r
CROSS JOIN LATERAL tapedeck_store.run_step_rows(r.tenant, r.run_id) x;
