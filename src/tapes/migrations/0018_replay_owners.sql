-- Replays across replicas (src/replay/owners.ts, deploy/scale-out.md). A replay lives in the
-- memory of the replica that created it; this table says which one, so a call reaching any
-- other replica is forwarded there. Rows are written at creation and never change; expired
-- ones are deleted as new replays are created, and a replica's own at its graceful shutdown.
CREATE TABLE tapedeck_store.replay_owners (
  id            text   PRIMARY KEY,   -- "rp_<32 hex>"
  owner_url     text   NOT NULL,      -- the replica's --replica-url
  expires_at_ns bigint NOT NULL
);
CREATE INDEX replay_owners_expiry ON tapedeck_store.replay_owners (expires_at_ns);
CREATE INDEX replay_owners_owner ON tapedeck_store.replay_owners (owner_url);

-- What each erasure covers, as replays check it (src/erasure/erasure-feed.ts), written in the
-- erasure's transaction: every replica reads those recorded through the others before a
-- call through one of its replays. xid orders them by commit safely: a reader that has seen
-- everything below its snapshot's xmin asks only for rows from there on.
CREATE TABLE tapedeck_store.erasure_notices (
  seq         bigint      PRIMARY KEY,   -- the erasure's seq
  xid         xid8        NOT NULL DEFAULT pg_current_xact_id(),
  notice      jsonb       NOT NULL,
  recorded_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX erasure_notices_xid ON tapedeck_store.erasure_notices (xid);
