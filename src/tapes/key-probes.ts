/**
 * @module tapes/key-probes
 * Reads of a tenant's rows by a list of keys ($1 the tenant), written as one probe of the key
 * per entry: a LATERAL subquery kept apart (OFFSET 0, or a row lock), not `= ANY` over the
 * list, which PostgreSQL plans as a scan of the tenant's rows when its statistics lag a
 * fast-growing table (docs/architecture.md, "Message store").
 */
import { hexToBytes } from './span-rows.js';
import { spanKey } from './span-tree.js';

/** FROM items: each trace id of $2 (`k.id`) and `columns` of `table`'s rows of it (`r`). */
export const byTrace = (columns: string, table = 'tapedeck_store.spans') =>
  `unnest($2::bytea[]) AS k(id)
   CROSS JOIN LATERAL (SELECT ${columns} FROM ${table} WHERE tenant = $1 AND trace_id = k.id OFFSET 0) r`;

/**
 * FROM items: each (trace, span) pair of $2, $3 (`k.n`, its index from 1) and `columns` of
 * `table`'s rows of it (`r`); `lock`: the rows locked (FOR UPDATE), which keeps them apart too.
 */
export const byPair = (columns: string, table: string, lock = false) =>
  `unnest($2::bytea[], $3::bytea[]) WITH ORDINALITY AS k(trace, span, n)
   CROSS JOIN LATERAL (SELECT ${columns} FROM ${table}
                        WHERE tenant = $1 AND trace_id = k.trace AND span_id = k.span
                        ${lock ? 'FOR UPDATE' : 'OFFSET 0'}) r`;

/** $2 and $3 of byPair: each distinct (trace id, span id) pair once, in the order given. */
export function pairParams(pairs: Iterable<readonly [string, string]>): [Buffer[], Buffer[]] {
  const seen = new Set<string>();
  const traces: Buffer[] = [];
  const spans: Buffer[] = [];
  for (const [trace, span] of pairs) {
    const key = spanKey(trace, span);
    if (seen.has(key)) continue;
    seen.add(key);
    traces.push(hexToBytes(trace));
    spans.push(hexToBytes(span));
  }
  return [traces, spans];
}
