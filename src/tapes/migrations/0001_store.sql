-- Private tables. Users read the views in schema `tapedeck` (0002_views.sql), never these.
-- Every key leads with tenant and trace id so the schema can be distributed (Citus) later.
-- tenant '' means "no tenant" (a primary key column cannot be NULL); views show it as NULL.

CREATE TABLE tapedeck_store.spans (
  tenant            text     NOT NULL DEFAULT '',
  trace_id          bytea    NOT NULL,
  span_id           bytea    NOT NULL,
  parent_span_id    bytea,
  trace_state       text     NOT NULL DEFAULT '',
  flags             bigint   NOT NULL DEFAULT 0,
  name              text     NOT NULL,
  kind              text     NOT NULL,
  start_ns          bigint   NOT NULL,
  end_ns            bigint   NOT NULL,
  status_code       text     NOT NULL,
  status_message    text     NOT NULL DEFAULT '',
  attributes        jsonb    NOT NULL,
  events            jsonb    NOT NULL,
  links             jsonb    NOT NULL,
  resource          jsonb    NOT NULL,
  scope_name        text     NOT NULL DEFAULT '',
  scope_version     text     NOT NULL DEFAULT '',
  scope_attributes  jsonb    NOT NULL DEFAULT '{}',
  service_name      text,
  dropped_attributes_count           integer NOT NULL DEFAULT 0,
  dropped_events_count               integer NOT NULL DEFAULT 0,
  dropped_links_count                integer NOT NULL DEFAULT 0,
  resource_dropped_attributes_count  integer NOT NULL DEFAULT 0,
  -- What the span itself says about its run (from the normalizer): the run id it carries
  -- and an explicitly named parent run.
  own_run           text,
  own_parent_run    text,
  -- Derived from the trace (src/tapes/resolve-runs.ts): the run the span belongs to and,
  -- for every span of a child run, that run's parent run.
  run_id            text,
  parent_run        text,
  received_at       timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, trace_id, span_id)
);
CREATE INDEX spans_run_idx ON tapedeck_store.spans (tenant, run_id, start_ns);
-- A span's children (folding a model call's nested SDK span into it: 0002_views.sql).
CREATE INDEX spans_children_idx ON tapedeck_store.spans (tenant, trace_id, parent_span_id);
-- Run trees: the child runs of a run.
CREATE INDEX spans_parent_run_idx ON tapedeck_store.spans (tenant, parent_run) WHERE parent_run IS NOT NULL;

CREATE TABLE tapedeck_store.logs (
  tenant            text     NOT NULL DEFAULT '',
  -- A log record has no id of its own: this is the SHA-256 of what identifies it
  -- (see src/tapes/log-key.ts), so a resent request adds nothing.
  record_key        bytea    NOT NULL,
  trace_id          bytea,
  span_id           bytea,
  time_ns           bigint   NOT NULL,
  observed_time_ns  bigint   NOT NULL,
  severity_number   integer  NOT NULL DEFAULT 0,
  severity_text     text     NOT NULL DEFAULT '',
  event_name        text,
  body              jsonb,
  attributes        jsonb    NOT NULL,
  flags             bigint   NOT NULL DEFAULT 0,
  resource          jsonb    NOT NULL,
  scope_name        text     NOT NULL DEFAULT '',
  scope_version     text     NOT NULL DEFAULT '',
  service_name      text,
  dropped_attributes_count integer NOT NULL DEFAULT 0,
  -- Records of one span often share a timestamp (content events of one call): their order
  -- is the order they were sent in, kept as when and where in its request each arrived.
  received_at       timestamptz NOT NULL DEFAULT now(),
  position          integer  NOT NULL DEFAULT 0,
  PRIMARY KEY (tenant, record_key)
);
CREATE INDEX logs_span_idx ON tapedeck_store.logs (tenant, trace_id, span_id);

-- One row per span that is a step (llm, tool, agent); derived from spans by the normalizer.
CREATE TABLE tapedeck_store.steps (
  tenant             text     NOT NULL DEFAULT '',
  trace_id           bytea    NOT NULL,
  span_id            bytea    NOT NULL,
  kind               text     NOT NULL,
  name               text     NOT NULL,
  model              text,
  tool               text,
  -- tool steps: the id of the tool call this execution answered, when recorded
  tool_call_id       text,
  status             text     NOT NULL,
  request            jsonb,
  response           jsonb,
  request_digest     text,
  response_digest    text,
  fingerprint        text     NOT NULL,
  tokens_input       bigint,
  tokens_output      bigint,
  tokens_cache_read  bigint,
  tokens_cache_write bigint,
  tokens_context     bigint,
  params             jsonb    NOT NULL DEFAULT '{}',
  layout             text     NOT NULL,
  cost_usd           double precision,
  normalizer_version integer  NOT NULL,
  PRIMARY KEY (tenant, trace_id, span_id)
);

-- Payload bytes for the PostgreSQL payload backend; metadata for every backend.
CREATE TABLE tapedeck_store.payloads (
  digest      text        PRIMARY KEY,  -- "sha256/<hex>"
  size_bytes  bigint      NOT NULL,
  media_type  text        NOT NULL DEFAULT 'application/json',
  bytes       bytea,                    -- NULL when the bytes live in another backend
  created_at  timestamptz NOT NULL DEFAULT now()
);

-- lz4 compresses large jsonb faster than the default pglz. Servers built without
-- lz4 (and PGlite) keep the default.
DO $$
BEGIN
  ALTER TABLE tapedeck_store.spans ALTER COLUMN attributes SET COMPRESSION lz4;
  ALTER TABLE tapedeck_store.spans ALTER COLUMN events SET COMPRESSION lz4;
  ALTER TABLE tapedeck_store.logs ALTER COLUMN body SET COMPRESSION lz4;
  ALTER TABLE tapedeck_store.logs ALTER COLUMN attributes SET COMPRESSION lz4;
  ALTER TABLE tapedeck_store.steps ALTER COLUMN request SET COMPRESSION lz4;
  ALTER TABLE tapedeck_store.steps ALTER COLUMN response SET COMPRESSION lz4;
EXCEPTION WHEN others THEN
  NULL;
END $$;
