-- Runs newest first (GET /v1/runs, `tapedeck runs`) without aggregating every span: walking
-- spans by end time, newest first, a run's first span met is its last-ending one, so the runs
-- of a page are found in the order of the page (src/tapes/run-reader.ts).
CREATE INDEX spans_end_idx ON tapedeck_store.spans (tenant, end_ns, run_id) WHERE run_id IS NOT NULL;
