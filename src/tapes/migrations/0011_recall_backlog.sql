-- Recall's index is written after the steps' transaction, not in it (src/recall/backlog.ts,
-- recall-indexer.ts): ingest records which steps it wrote, one row per transaction, and the
-- indexer turns them into rows of tapedeck_store.trace_words, deleting the backlog row in
-- the same transaction. A step's words and the GIN entries they make were most of what
-- deriving cost ingest with long prompts; ingest now acknowledges without them.
CREATE TABLE tapedeck_store.recall_backlog (
  id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  tenant      text        NOT NULL DEFAULT '',
  -- the steps' trace ids (16 bytes each) and span ids (8 bytes each), step by step
  trace_ids   bytea       NOT NULL,
  span_ids    bytea       NOT NULL,
  steps       integer     NOT NULL,
  enqueued_at timestamptz NOT NULL DEFAULT now()
);
