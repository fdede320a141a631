-- The catalog of imported cassettes (src/cassettes/catalog.ts): one row per cassette file
-- imported into this store, and only an index: every column but imported_at is read from the
-- file alone, so dropping the rows and importing the files again rebuilds it.

CREATE TABLE tapedeck_store.cassettes (
  tenant          text        NOT NULL DEFAULT '',
  id              text        NOT NULL,
  name            text        NOT NULL,
  manifest_sha256 text        NOT NULL,
  schema_version  integer     NOT NULL,
  created_at      text        NOT NULL,
  root_run        text        NOT NULL,
  runs            jsonb       NOT NULL,
  size_bytes      bigint      NOT NULL,
  imported_at     timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (tenant, id)
);
