// PostgreSQL binary COPY encoding for the raw baseline (COPY ... FROM STDIN (FORMAT binary)):
// a header, then per row a field count and each field as a length-prefixed value, then -1.
// Types used by the spans table: text, bytea, int8, int4, jsonb (version byte 1 + JSON text).
// https://www.postgresql.org/docs/15/sql-copy.html ("Binary Format")

const HEADER = Buffer.concat([Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1'), Buffer.alloc(8)]);
const TRAILER = Buffer.from([0xff, 0xff]);

/** Encodes rows (arrays of JS values) for the given column types into binary COPY chunks. */
export function createBinaryCopyEncoder(types) {
  const encoders = types.map((t) => {
    switch (t) {
      case 'text':
        return (v) => Buffer.from(String(v), 'utf8');
      case 'bytea':
        return (v) => v;
      case 'int8':
        return (v) => {
          const b = Buffer.allocUnsafe(8);
          b.writeBigInt64BE(BigInt(v));
          return b;
        };
      case 'int4':
        return (v) => {
          const b = Buffer.allocUnsafe(4);
          b.writeInt32BE(Number(v));
          return b;
        };
      case 'jsonb':
        return (v) => {
          const body = Buffer.from(v, 'utf8');
          const b = Buffer.allocUnsafe(body.length + 1);
          b[0] = 1;
          body.copy(b, 1);
          return b;
        };
      default:
        throw new Error(`no binary COPY encoder for ${t}`);
    }
  });
  return {
    header: HEADER,
    trailer: TRAILER,
    /** One row: int16 field count, then int32 length (-1 for NULL) and bytes per field. */
    row(values) {
      const parts = [];
      const count = Buffer.allocUnsafe(2);
      count.writeInt16BE(values.length);
      parts.push(count);
      for (let i = 0; i < values.length; i++) {
        const len = Buffer.allocUnsafe(4);
        if (values[i] === null || values[i] === undefined) {
          len.writeInt32BE(-1);
          parts.push(len);
          continue;
        }
        const bytes = encoders[i](values[i]);
        len.writeInt32BE(bytes.length);
        parts.push(len, bytes);
      }
      return Buffer.concat(parts);
    },
  };
}
