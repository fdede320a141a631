-- A message's row holds its body and recall's words (8 bytes a word: for prose about as long
-- as the body). At the default toast target (about 2 KB) a message of a few KB never fitted:
-- PostgreSQL tried to compress the words (hashes, which do not compress), compressed the body
-- and moved one of them to the TOAST table, an extra row and index entry per message. A row
-- now stays whole up to 4 KB, two to a page; a larger one has its body compressed first and
-- then moved out as before. The words are never compressed (EXTERNAL), only moved out when a
-- row is still too long. Rows written before keep their layout.
ALTER TABLE tapedeck_store.messages SET (toast_tuple_target = 4096);
ALTER TABLE tapedeck_store.messages ALTER COLUMN words SET STORAGE EXTERNAL;
