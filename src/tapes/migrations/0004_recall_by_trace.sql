-- Recall's word index by trace (src/recall/trace-words.ts). Agents resend the conversation on
-- every model call, so the steps of a trace repeat most of each other's words; indexing each
-- step's words (0003) made one GIN entry per word per step, most of ingest's database work.
-- Now the index holds each trace's words (one row per write of the trace's steps), and
-- steps.search, no longer indexed, keeps each step's own words for the exact test: a query
-- takes the traces whose rows hold every word, then the steps among them that do.
CREATE TABLE tapedeck_store.trace_words (
  tenant   text     NOT NULL DEFAULT '',
  trace_id bytea    NOT NULL,
  words    tsvector NOT NULL,
  -- how many steps' words the row holds: summed over the rows a query finds, at least the
  -- number of steps it can match, so a query is known not to be too broad without counting
  steps    integer  NOT NULL
);
CREATE INDEX trace_words_words_idx ON tapedeck_store.trace_words USING gin (words);
CREATE INDEX trace_words_trace_idx ON tapedeck_store.trace_words (tenant, trace_id);

-- Steps stored before: one row each (each step's words fit a tsvector; a trace's union of
-- them might not). `tapedeck reindex` rewrites them as one row per trace.
INSERT INTO tapedeck_store.trace_words (tenant, trace_id, words, steps)
  SELECT tenant, trace_id, search, 1 FROM tapedeck_store.steps WHERE search IS NOT NULL;

DROP INDEX tapedeck_store.steps_search_idx;
