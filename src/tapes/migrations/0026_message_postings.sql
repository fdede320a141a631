-- Recall's words of a message are split where they are written (src/tapes/message-rows.ts):
-- a word many of the messages one write stores hold is stored once for all of them, as a row
-- here with a bit per message, where the GIN on messages.words took an entry per message and
-- word (most of PostgreSQL's work at large prompts). The rest stay in the message's `words`.
-- A message written so has an id of its write's block (block * 4096 + its position), so
-- "does message m hold word w" is one probe of this key and one bit. Rows written before keep
-- every word in `words` and ids below the first block: nothing is converted.
CREATE TABLE tapedeck_store.message_postings (
  tenant text   NOT NULL DEFAULT '',
  word   bigint NOT NULL,
  block  bigint NOT NULL,
  -- bit i (get_bit numbering) set: message block * 4096 + i holds the word; no longer than
  -- its last set bit needs
  bits   bytea  NOT NULL,
  PRIMARY KEY (tenant, word, block)
);
-- erasure's way to a deleted message's bits: the rows of its block
CREATE INDEX message_postings_block_idx ON tapedeck_store.message_postings (tenant, block);
ALTER TABLE tapedeck_store.message_postings ALTER COLUMN bits SET STORAGE PLAIN;

-- Blocks start past every id the identity gave: an old id's block holds no postings.
CREATE SEQUENCE tapedeck_store.message_blocks;
SELECT setval('tapedeck_store.message_blocks',
              coalesce((SELECT max(id) FROM tapedeck_store.messages), 0) / 4096 + 1, false);
-- A row written without an id (by SQL of one's own) is a block of its own, so it never
-- takes an id of a block ingest is writing.
ALTER TABLE tapedeck_store.messages ALTER COLUMN id DROP IDENTITY;
ALTER TABLE tapedeck_store.messages
  ALTER COLUMN id SET DEFAULT nextval('tapedeck_store.message_blocks') * 4096;

ALTER TABLE tapedeck_store.message_postings ENABLE ROW LEVEL SECURITY;
CREATE POLICY tenant_rows ON tapedeck_store.message_postings
  USING (tenant IS NOT DISTINCT FROM COALESCE(tapedeck_store.tenant_of_role(current_user), tenant));
DO $$
DECLARE g record;
BEGIN
  FOR g IN SELECT DISTINCT a.grantee FROM pg_class c, aclexplode(c.relacl) a
            WHERE c.oid = 'tapedeck_store.messages'::regclass AND a.privilege_type = 'SELECT'
              AND a.grantee <> c.relowner LOOP
    EXECUTE format('GRANT SELECT ON tapedeck_store.message_postings TO %s',
                   CASE WHEN g.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(g.grantee)) END);
  END LOOP;
END $$;

-- The bits with those at p_at cleared: for the messages erasure and reindex delete.
CREATE FUNCTION tapedeck_store.without_bits(p_bits bytea, p_at int[]) RETURNS bytea
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE AS $$
DECLARE
  i int;
BEGIN
  FOREACH i IN ARRAY p_at LOOP
    IF i < length(p_bits) * 8 THEN
      p_bits := set_bit(p_bits, i, 0);
    END IF;
  END LOOP;
  RETURN p_bits;
END $$;

ALTER INDEX tapedeck_store.messages_words_idx SET (gin_pending_list_limit = 1024);
