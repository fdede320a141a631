-- Whether a message's text is in the server's rendering (canonical JSON), as every message
-- this version writes is: a tape's answer splices such text in as it is. Messages moved into
-- the store by 0020 keep the text their step held, in jsonb's rendering where the step came
-- from a jsonb column, and readers render those again. Rows there now read false (the
-- column's first default, kept for them without rewriting the table); rows written from now
-- on take true.
ALTER TABLE tapedeck_store.messages ADD COLUMN canonical boolean NOT NULL DEFAULT false;
ALTER TABLE tapedeck_store.messages ALTER COLUMN canonical SET DEFAULT true;
