/**
 * @module store/bulk-insert
 * Multi-row INSERT with per-column casts, chunked under PostgreSQL's 65,535 bind-parameter
 * limit. Portable across both adapters (PGlite has no COPY FROM STDIN over its query API).
 */
import type { CopyColumn, CopyType, Queryable } from './database.js';

export interface Column {
  name: string;
  /** SQL cast applied to the parameter, e.g. 'jsonb', 'bytea', 'bigint' */
  cast?: string;
  /** SQL computing the value from the parameter (given as e.g. `$7`); wins over cast */
  expr?: (param: string) => string;
  /** the column's type for binary COPY, when the cast does not say it (expr columns) */
  copy?: CopyType;
  /** the value as a query parameter, where the row holds it in the form COPY takes */
  param?: (value: unknown) => unknown;
}

const copyTypeOfCast: Record<string, CopyType> = {
  bytea: 'bytea',
  boolean: 'bool',
  bigint: 'int8',
  integer: 'int4',
  'double precision': 'float8',
  jsonb: 'jsonb',
  // json's binary form is its text
  json: 'text',
};

/** The same columns for copyRows; the casts name the columns' own types, as binary COPY needs. */
export function copyColumnsOf(columns: readonly Column[]): CopyColumn[] {
  return columns.map((c) => {
    const type = c.copy ?? (c.cast ? copyTypeOfCast[c.cast] : 'text');
    if (!type) throw new Error(`column ${c.name}: no binary COPY type for cast ${c.cast}`);
    return { name: c.name, type };
  });
}

const MAX_PARAMS = 60_000;

/** Inserts rows; `tail` is appended to each statement (ON CONFLICT ..., RETURNING ...). */
export async function insertRows<Row = unknown>(
  tx: Queryable,
  table: string,
  columns: readonly Column[],
  rows: readonly unknown[][],
  tail = '',
): Promise<Row[]> {
  const out: Row[] = [];
  if (rows.length === 0) return out;
  const perChunk = Math.max(1, Math.floor(MAX_PARAMS / columns.length));
  const columnList = columns.map((c) => c.name).join(', ');
  for (let start = 0; start < rows.length; start += perChunk) {
    const chunk = rows.slice(start, start + perChunk);
    const params: unknown[] = [];
    const tuples = chunk.map((row) => {
      const cells = columns.map((c, i) => {
        params.push(c.param && row[i] !== null && row[i] !== undefined ? c.param(row[i]) : row[i]);
        const param = `$${params.length}`;
        return c.expr ? c.expr(param) : c.cast ? `${param}::${c.cast}` : param;
      });
      return `(${cells.join(', ')})`;
    });
    const result = await tx.query<Row>(
      `INSERT INTO ${table} (${columnList}) VALUES ${tuples.join(', ')} ${tail}`,
      params,
    );
    out.push(...result);
  }
  return out;
}
