/**
 * Steps as the versions before migration 0022 stored them, for tests that write a store of
 * such a version from one written now: each message list as the digests of its messages (the
 * ids of the message store looked up), as JSON for json_populate_record.
 */
export function stepsWithDigestListsSql(drop = ''): string {
  const list = (side: string) =>
    `coalesce((SELECT jsonb_agg('\\x' || encode(m.digest, 'hex') ORDER BY u.n)
                 FROM unnest(st.${side}_messages) WITH ORDINALITY AS u(id, n)
                 JOIN tapedeck_store.messages m ON m.tenant = st.tenant AND m.id = u.id),
              CASE WHEN st.${side}_messages IS NOT NULL THEN '[]'::jsonb END)`;
  return `SELECT (to_jsonb(st)${drop} - 'request_messages' - 'response_messages'
                 || jsonb_build_object('request_messages', ${list('request')},
                                       'response_messages', ${list('response')}))::text AS j
            FROM tapedeck_store.steps st`;
}
