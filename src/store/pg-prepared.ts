/**
 * @module store/pg-prepared
 * Names for the statements the PostgreSQL adapter prepares (QueryOptions.prepared): one per
 * distinct text, derived from it, so every connection of every process names a text alike and
 * no two texts share a name. A connection keeps each statement it prepared until it closes,
 * so a process prepares at most MAX_PREPARED_STATEMENTS texts; a statement past them (a text
 * built with its values in it, marked by mistake) runs unprepared.
 */
import { createHash } from 'node:crypto';

export const MAX_PREPARED_STATEMENTS = 256;

/** The name `sql` is prepared under, or null when it runs unprepared. */
export type StatementNames = (sql: string) => string | null;

export function createStatementNames(max = MAX_PREPARED_STATEMENTS): StatementNames {
  const names = new Map<string, string>();
  return (sql) => {
    const known = names.get(sql);
    if (known !== undefined) return known;
    if (names.size >= max) return null;
    const name = `tapedeck_${createHash('sha256').update(sql).digest('hex').slice(0, 32)}`;
    names.set(sql, name);
    return name;
  };
}
