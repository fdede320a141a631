-- Erasure and retention (src/erasure/, docs/security.md). An erasure deletes the rows every
-- read sees (spans, steps, log records, recall's index rows) in the transaction that records
-- it, so the API, the SQL views and any query of one's own stop showing them at commit; the
-- payload bytes those rows referenced are purged after it, in the background, each once no
-- remaining step references it.

CREATE TABLE tapedeck_store.erasures (
  id            text        PRIMARY KEY,              -- "er_<32 hex>"
  seq           bigint      GENERATED ALWAYS AS IDENTITY UNIQUE,
  -- the tenant whose credential asked for it ('' for none); NULL for an unbound (operator)
  -- credential, whose erasures reach every tenant
  tenant        text,
  -- run, trace_id, span, tenant, payload, user, or retention (a retention batch)
  scope         text        NOT NULL,
  target        jsonb       NOT NULL,
  -- counts of what was deleted: spans, steps, log_records, payloads, recall_index_rows, runs
  receipt       jsonb       NOT NULL,
  -- purging until every payload it found unreferenced is gone, then complete
  status        text        NOT NULL,
  payloads_total  integer   NOT NULL DEFAULT 0,
  payloads_purged integer   NOT NULL DEFAULT 0,
  created_at    timestamptz NOT NULL DEFAULT now(),
  completed_at  timestamptz
);

-- Payloads an erasure found referenced by what it deleted and by nothing left: the background
-- purge deletes each (checking again that nothing references it) and then its row.
CREATE TABLE tapedeck_store.erasure_payloads (
  erasure_id text NOT NULL REFERENCES tapedeck_store.erasures (id) ON DELETE CASCADE,
  digest     text NOT NULL,
  PRIMARY KEY (erasure_id, digest)
);

-- The payload a stored request or response refers to, as offload writes it
-- (src/payloads/offload.ts): the whole value {"$payload":"sha256/<hex>"}, or a message list
-- that ends with one after its system messages. NULL for everything else. It reads the ends of
-- the canonical text only, so it costs next to nothing per step written.
CREATE FUNCTION tapedeck_store.payload_ref_of(value text) RETURNS text
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT CASE
    WHEN value IS NULL THEN NULL
    WHEN left(value, 13) = '{"$payload":"' AND length(value) = 86
         AND value ~ '^\{"\$payload":"sha256/[0-9a-f]{64}"\}$' THEN substr(value, 14, 71)
    WHEN left(value, 1) = '[' AND right(value, 88) ~ '^,\{"\$payload":"sha256/[0-9a-f]{64}"\}\]$'
      THEN substr(right(value, 88), 15, 71)
  END
$$;

-- "Is this payload still referenced?" without reading every step: only offloaded steps
-- (a few) are in these indexes.
CREATE INDEX steps_request_payload_idx ON tapedeck_store.steps (tapedeck_store.payload_ref_of(request))
  WHERE tapedeck_store.payload_ref_of(request) IS NOT NULL;
CREATE INDEX steps_response_payload_idx ON tapedeck_store.steps (tapedeck_store.payload_ref_of(response))
  WHERE tapedeck_store.payload_ref_of(response) IS NOT NULL;

-- Retention walks each tenant's spans by end time: spans_end_idx (0005) holds those with a
-- run; this one the few without (stored with --derive off, not yet derived).
CREATE INDEX spans_unresolved_end_idx ON tapedeck_store.spans (tenant, end_ns) WHERE run_id IS NULL;

-- Retention sweeps recall's index row by row after it deletes spans (src/erasure/retention.ts).
CREATE INDEX trace_words_row_idx ON tapedeck_store.trace_words (tenant, row_id);

-- Retention deletes log records by their own time too: a record can arrive after its span
-- was deleted, or never have had one.
CREATE INDEX logs_time_idx ON tapedeck_store.logs (tenant, time_ns);
