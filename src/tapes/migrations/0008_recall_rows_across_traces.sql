-- Recall's index rows hold the steps written together, of one trace or several
-- (src/recall/trace-words.ts): a row's steps name their trace each, as they name their span.
-- A GIN entry per word per row is most of what the index costs to write; rows by trace put a
-- request's common words in the index once per trace it carries.
--
-- Rows are no longer found by trace: `tapedeck reindex` writes every trace's words anew and
-- then drops the rows numbered up to the last one written before it started (row_id).

-- the steps' trace ids, 16 bytes each, in bit order (as span_ids)
ALTER TABLE tapedeck_store.trace_words ADD COLUMN trace_ids bytea;
UPDATE tapedeck_store.trace_words SET trace_ids = decode(repeat(encode(trace_id, 'hex'), steps), 'hex');
ALTER TABLE tapedeck_store.trace_words ALTER COLUMN trace_ids SET NOT NULL;
DROP INDEX tapedeck_store.trace_words_trace_idx;
ALTER TABLE tapedeck_store.trace_words DROP COLUMN trace_id;
-- in the order rows were written
ALTER TABLE tapedeck_store.trace_words ADD COLUMN row_id bigint GENERATED ALWAYS AS IDENTITY;
