-- Recall's index, cheaper to write (src/recall/trace-words.ts). Words are stored as 64-bit
-- hashes (src/recall/word-hash.ts) instead of tsvector lexemes, and each row of a trace's
-- steps says which of its steps hold each word (masks, span_ids), so steps no longer keep
-- their own words: steps.search and its tsvector per step (a large part of what recall
-- cost ingest) are gone. The old rows
-- cannot be turned into hashes in SQL: runs stored before this migration are found by recall
-- again once `tapedeck reindex` has re-derived them (recorded in reindex_needed, below, so
-- serve says so at start).
DROP TABLE tapedeck_store.trace_words;
ALTER TABLE tapedeck_store.steps DROP COLUMN search;

CREATE TABLE tapedeck_store.trace_words (
  tenant   text     NOT NULL DEFAULT '',
  trace_id bytea    NOT NULL,
  -- the distinct words of the row's steps
  words    bigint[] NOT NULL,
  -- per word (same position), the steps holding it: bit i (of 64) for the i-th step
  masks    bigint[] NOT NULL,
  -- the steps' span ids, 8 bytes each, in bit order
  span_ids bytea    NOT NULL,
  -- how many steps the row holds (at most 64): summed over the rows a query finds, at least
  -- the number of steps it can match
  steps    integer  NOT NULL
);
CREATE INDEX trace_words_words_idx ON tapedeck_store.trace_words USING gin (words);
CREATE INDEX trace_words_trace_idx ON tapedeck_store.trace_words (tenant, trace_id);
-- Hashes do not compress: store them out of line as they are rather than try. Masks are
-- mostly zero bytes and compress well, with lz4 where the server has it (as in 0001).
ALTER TABLE tapedeck_store.trace_words ALTER COLUMN words SET STORAGE EXTERNAL;
DO $$
BEGIN
  ALTER TABLE tapedeck_store.trace_words ALTER COLUMN masks SET COMPRESSION lz4;
EXCEPTION WHEN others THEN
  NULL;
END $$;

-- Why stored steps need `tapedeck reindex`, one row per reason: serve warns at start while a
-- row is here, and a complete reindex empties the table.
CREATE TABLE tapedeck_store.reindex_needed (reason text PRIMARY KEY);
INSERT INTO tapedeck_store.reindex_needed (reason)
  SELECT 'recall finds runs stored before migration 6 (words as hashes) only once they are derived again'
   WHERE EXISTS (SELECT 1 FROM tapedeck_store.steps);
