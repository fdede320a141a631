/**
 * Steps and messages as the versions before migration 0022 stored them, for tests that write
 * a store of such a version from one written now: each message list as the digests of its
 * messages (the ids of the message store looked up), and each answer whole, its finish_reason
 * in the message (before 0025 the store kept it so, beside the turn the history resends), as
 * JSON for json_populate_record.
 */

/** A list's message, over `st` and `m` at position `u.n`, as text before 0025. */
const wholeText = (side: string) =>
  side === 'response'
    ? `CASE WHEN st.response_finish_reasons[u.n] IS NULL THEN m.body
            ELSE tapedeck_store.with_finish_reason(m.body, st.response_finish_reasons[u.n]) END`
    : 'm.body';

export function stepsWithDigestListsSql(drop = ''): string {
  const list = (side: string) =>
    `coalesce((SELECT jsonb_agg('\\x' || encode(sha256(convert_to(${wholeText(side)}, 'UTF8')), 'hex') ORDER BY u.n)
                 FROM unnest(st.${side}_messages) WITH ORDINALITY AS u(id, n)
                 JOIN tapedeck_store.messages m ON m.tenant = st.tenant AND m.id = u.id),
              CASE WHEN st.${side}_messages IS NOT NULL THEN '[]'::jsonb END)`;
  return `SELECT (to_jsonb(st)${drop} - 'request_messages' - 'response_messages' - 'response_finish_reasons'
                 || jsonb_build_object('request_messages', ${list('request')},
                                       'response_messages', ${list('response')}))::text AS j
            FROM tapedeck_store.steps st`;
}

/**
 * The messages, and each answer whole once more (a turn no request names would not have been
 * stored then either, but is harmless: nothing names it until 0025 makes the answer its turn).
 */
export function messagesWithAnswersWholeSql(drop = '', order = ''): string {
  return `SELECT j FROM (
            SELECT (to_jsonb(m)${drop})::text AS j, m.body FROM tapedeck_store.messages m
            UNION
            SELECT (to_jsonb(m)${drop} || jsonb_build_object(
                      'digest', '\\x' || encode(sha256(convert_to(${wholeText('response')}, 'UTF8')), 'hex'),
                      'body', ${wholeText('response')}))::text, ${wholeText('response')}
              FROM tapedeck_store.steps st
             CROSS JOIN LATERAL unnest(st.response_messages) WITH ORDINALITY AS u(id, n)
              JOIN tapedeck_store.messages m ON m.tenant = st.tenant AND m.id = u.id
             WHERE st.response_finish_reasons[u.n] IS NOT NULL) t ${order}`;
}
