-- Recall (GET /v1/recall): each step's words, for "which runs recorded these words?".
-- The lexemes are computed by tapedeck (src/recall/tokenize.ts) and stored as they are with
-- array_to_tsvector, never through PostgreSQL's text-search parser, whose idea of a letter
-- depends on the server's locale and which does not segment Chinese: the same words are
-- found on PGlite and on every server. Steps stored before this migration have no words
-- (NULL) until `tapedeck reindex` re-derives them.
ALTER TABLE tapedeck_store.steps ADD COLUMN search tsvector;
CREATE INDEX steps_search_idx ON tapedeck_store.steps USING gin (search);
