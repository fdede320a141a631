/**
 * @module payloads/pg-payload-store
 * Payload bytes in tapedeck_store.payloads, for deployments that want one database and
 * nothing else to back up. Works over either Database adapter (PGlite or pg) and inside a
 * transaction, since it needs only the Queryable half of the port.
 *
 * The same table holds metadata rows for payloads whose bytes live in another backend
 * (bytes IS NULL, see 0001_store.sql). This store owns only rows that carry bytes: such a
 * row counts as absent here, a put fills its bytes in, and delete leaves it alone.
 */
import type { Queryable } from '../store/database.js';
import {
  type PayloadStore,
  DEFAULT_PAYLOAD_MEDIA_TYPE,
  asPlainBytes,
  parsePayloadRef,
  payloadRefOf,
  verifyPayload,
} from './payload-store.js';

export interface PgPayloadStoreDeps {
  db: Queryable;
}

// Write-once: a row that already carries bytes of the right length is these bytes (the name
// is their hash), so a second put changes nothing. The WHERE lets a put repair the two cases
// where keeping the existing row would keep a payload unreadable forever: a metadata-only
// row (bytes NULL) and bytes of the wrong length (damage). Concurrent puts of the same bytes
// serialise on the primary key; the loser takes this branch and finds nothing to do.
const PUT_SQL = `
  INSERT INTO tapedeck_store.payloads AS p (digest, size_bytes, media_type, bytes)
  VALUES ($1, $2, $3, $4)
  ON CONFLICT (digest) DO UPDATE
    SET bytes = EXCLUDED.bytes, size_bytes = EXCLUDED.size_bytes, media_type = EXCLUDED.media_type
    WHERE p.bytes IS NULL OR octet_length(p.bytes) <> EXCLUDED.size_bytes`;

export function createPgPayloadStore(deps: PgPayloadStoreDeps): PayloadStore {
  const { db } = deps;
  return {
    async put(bytes, mediaType = DEFAULT_PAYLOAD_MEDIA_TYPE) {
      const ref = payloadRefOf(bytes);
      // A Buffer view, not a copy: both adapters bind a Buffer as bytea, while a bare
      // Uint8Array is not bound as bytea by every pg version.
      const param = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      await db.query(PUT_SQL, [ref, bytes.byteLength, mediaType, param]);
      return ref;
    },

    async get(ref) {
      parsePayloadRef(ref);
      const rows = await db.query<{ bytes: Uint8Array | null }>(
        'SELECT bytes FROM tapedeck_store.payloads WHERE digest = $1',
        [ref],
      );
      const bytes = rows[0]?.bytes;
      if (bytes === undefined || bytes === null) return undefined;
      return verifyPayload(ref, asPlainBytes(bytes), 'postgresql');
    },

    async has(ref) {
      parsePayloadRef(ref);
      const rows = await db.query('SELECT 1 FROM tapedeck_store.payloads WHERE digest = $1 AND bytes IS NOT NULL', [
        ref,
      ]);
      return rows.length > 0;
    },

    async delete(ref) {
      parsePayloadRef(ref);
      const rows = await db.query(
        'DELETE FROM tapedeck_store.payloads WHERE digest = $1 AND bytes IS NOT NULL RETURNING 1',
        [ref],
      );
      return rows.length > 0;
    },
  };
}
