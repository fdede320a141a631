-- Whether a run failed, as its own function, so every reader that needs the fact rather
-- than the outcome (recall, which judges "still running" by its own clock) applies the same
-- rule: a span with status error that starts the run (no parent inside the run) or that
-- ended last. run_outcome keeps its meaning and now reads the rule from here.
CREATE FUNCTION tapedeck_store.run_failed(p_tenant text, p_run text, p_last_end_ns bigint)
RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT EXISTS (
    SELECT 1 FROM tapedeck_store.spans s
    WHERE s.tenant = p_tenant AND s.run_id = p_run AND s.status_code = 'error'
      AND (s.end_ns = p_last_end_ns
           OR s.parent_span_id IS NULL
           OR NOT EXISTS (SELECT 1 FROM tapedeck_store.spans p
                          WHERE p.tenant = s.tenant AND p.trace_id = s.trace_id
                            AND p.span_id = s.parent_span_id AND p.run_id = s.run_id))
  )
$$;

-- 'unknown' while the run's last span ended within the last 15 minutes (ACTIVE_WINDOW_NS in
-- src/tapes/run-outcome.ts: a test holds the two equal), else failure or success.
CREATE OR REPLACE FUNCTION tapedeck_store.run_outcome(p_tenant text, p_run text, p_last_end_ns bigint)
RETURNS text LANGUAGE sql STABLE AS $$
  SELECT CASE
    WHEN p_last_end_ns > (extract(epoch FROM clock_timestamp()) * 1e9)::bigint - 900000000000 THEN 'unknown'
    WHEN tapedeck_store.run_failed(p_tenant, p_run, p_last_end_ns) THEN 'failure'
    ELSE 'success'
  END
$$;
