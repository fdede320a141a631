-- Recall's rows of few steps hold their words in ascending order from this version on
-- (src/recall/trace-words.ts SORTED_ROW_STEPS: the GIN index sorts every array it takes, and
-- a sorted one costs it least), and say so in `sorted`. A query finds a word's place in such
-- a row by binary search (width_bucket) instead of reading the row's words one by one
-- (array_position; src/recall/query.ts). Rows written before keep their order and are false
-- here, so nothing is rewritten.
ALTER TABLE tapedeck_store.trace_words ADD COLUMN sorted boolean NOT NULL DEFAULT false;
