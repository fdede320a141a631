// pg-copy-streams ships no types; this is the part src/store/pg-copy.ts uses.
declare module 'pg-copy-streams' {
  import type { Writable } from 'node:stream';
  import type { Submittable } from 'pg';

  /** A COPY ... FROM STDIN query: write the data, end it; `rowCount` once it finished. */
  export interface CopyStreamQuery extends Writable, Submittable {
    rowCount: number;
  }

  export function from(text: string): CopyStreamQuery;
}
