-- Erasure by end user ({"user": ID}, src/erasure/erasures.ts) finds the spans that name the
-- user through an index instead of reading every span's attributes. end_users_of lists the
-- user ids a span names in the attributes USER_ATTRIBUTES lists (erasures.ts), in its own
-- attributes or its resource, and is NULL for a span that names none: only the spans naming
-- a user are in the index, and every other span costs ingest one evaluation of the function.
CREATE FUNCTION tapedeck_store.end_users_of(attributes jsonb, resource jsonb) RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
  SELECT NULLIF(array_remove(ARRAY[
    attributes ->> 'enduser.id', attributes ->> 'user.id', attributes ->> 'langfuse.user.id',
    attributes ->> 'traceloop.association.properties.user_id',
    resource ->> 'enduser.id', resource ->> 'user.id', resource ->> 'langfuse.user.id',
    resource ->> 'traceloop.association.properties.user_id'
  ], NULL), '{}')
$$;

CREATE INDEX spans_end_user_idx ON tapedeck_store.spans USING gin (tapedeck_store.end_users_of(attributes, resource))
  WHERE tapedeck_store.end_users_of(attributes, resource) IS NOT NULL;
