-- Recall's words live with what they were found in: each distinct message's words in its
-- row of tapedeck_store.messages, found once, when the message is first stored; a step's
-- own words (its name and tool, and any request or response not in the message store) in
-- its row of tapedeck_store.steps. A conversation's history, resent on every call, is no
-- longer indexed again per step, so trace_words (rows of steps' words with bit masks) and
-- recall_backlog (steps waiting to be indexed after their transaction) go.
--
-- Words are hashes found in JavaScript (src/recall/tokenize.ts), which SQL cannot compute:
-- rows stored before this migration have no words (NULL) until `tapedeck reindex` derives
-- them again (recorded in reindex_needed, so serve says so at start). A message with NULL
-- words gets them the next time a step stores it.
DROP TABLE tapedeck_store.trace_words;
DROP TABLE tapedeck_store.recall_backlog;

ALTER TABLE tapedeck_store.messages ADD COLUMN words bigint[];
ALTER TABLE tapedeck_store.steps ADD COLUMN words bigint[];
CREATE INDEX messages_words_idx ON tapedeck_store.messages USING gin (words);
CREATE INDEX steps_words_idx ON tapedeck_store.steps USING gin (words);

INSERT INTO tapedeck_store.reindex_needed (reason)
  SELECT 'recall finds runs stored before migration 21 (words by message) only once they are derived again'
   WHERE EXISTS (SELECT 1 FROM tapedeck_store.steps);
