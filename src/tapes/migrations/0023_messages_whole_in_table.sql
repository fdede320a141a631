-- A message's row holds its text and recall's words (8 bytes a word): a 2 KB message makes a
-- row of about 4 KB, past the 2 KB at which PostgreSQL compresses values and moves them to the
-- TOAST table, a second table and index written for every new message. Up to a page the row
-- now stays whole in the table (toast_tuple_target: only a row longer than that is compressed
-- and moved). Rows already written stay as they are.
ALTER TABLE tapedeck_store.messages SET (toast_tuple_target = 8160);
