/**
 * The binary COPY encoder (src/store/copy-binary.ts) byte by byte, against the format in
 * https://www.postgresql.org/docs/15/sql-copy.html ("Binary Format") and each type's recv
 * function. That the server reads these bytes as the same values an INSERT stores is
 * checked on a real server in test/integration/ingest-copy.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { ByteSink } from '../../../src/json/json-string.js';
import {
  BinaryCopyWriter,
  type CopyColumn,
  fillInt8Slots,
  Int8Slots,
  type Utf8Source,
} from '../../../src/store/copy-binary.js';

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const all = (w: BinaryCopyWriter, end = true) => Buffer.concat(w.take(end));
const int16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeInt16BE(n);
  return b;
};
const int32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const field = (bytes: Buffer) => Buffer.concat([int32(bytes.length), bytes]);

describe('BinaryCopyWriter', () => {
  it('starts with the signature, no flags and no header extension, and ends with -1', () => {
    const out = all(new BinaryCopyWriter([{ name: 'a', type: 'text' }]));
    expect(out).toEqual(Buffer.concat([SIGNATURE, int32(0), int32(0), int16(-1)]));
  });

  it('writes a row as its field count, then each field length-prefixed, NULL as length -1', () => {
    const columns: CopyColumn[] = [
      { name: 't', type: 'text' },
      { name: 'b', type: 'bytea' },
      { name: 'i4', type: 'int4' },
      { name: 'i8', type: 'int8' },
      { name: 'f', type: 'float8' },
      { name: 'j', type: 'jsonb' },
      { name: 'n', type: 'text' },
    ];
    const w = new BinaryCopyWriter(columns);
    w.row(['héllo', Buffer.from([1, 2, 3]), -7, '1796032240962000000', 0.25, '{"a":[1]}', null]);
    const i8 = Buffer.alloc(8);
    i8.writeBigInt64BE(1796032240962000000n);
    const f8 = Buffer.alloc(8);
    f8.writeDoubleBE(0.25);
    const expected = Buffer.concat([
      SIGNATURE,
      int32(0),
      int32(0),
      int16(7),
      field(Buffer.from('héllo', 'utf8')),
      field(Buffer.from([1, 2, 3])),
      field(int32(-7)),
      field(i8),
      field(f8),
      field(Buffer.concat([Buffer.from([1]), Buffer.from('{"a":[1]}')])), // jsonb: version 1, then the text
      int32(-1),
      int16(-1),
    ]);
    expect(all(w)).toEqual(expected);
  });

  it('takes int8 values as bigint, number or decimal string alike', () => {
    const bytes = (v: unknown) => {
      const w = new BinaryCopyWriter([{ name: 'x', type: 'int8' }]);
      w.row([v]);
      return all(w);
    };
    expect(bytes(-5n)).toEqual(bytes(-5));
    expect(bytes('9223372036854775807')).toEqual(bytes(9223372036854775807n));
  });

  it('writes a bigint[] given as 32-bit halves: one dimension, no NULLs, then each element', () => {
    const w = new BinaryCopyWriter([{ name: 'a', type: 'int8[]' }]);
    w.row([Int32Array.from([0, 1, -1, -2])]); // 1 and -2
    const element = (hex: string) => Buffer.concat([int32(8), Buffer.from(hex, 'hex')]);
    const body = Buffer.concat([
      int32(1),
      int32(0),
      int32(20),
      int32(2),
      int32(1),
      element('0000000000000001'),
      element('fffffffffffffffe'),
    ]);
    expect(all(w)).toEqual(Buffer.concat([SIGNATURE, int32(0), int32(0), int16(1), field(body), int16(-1)]));
  });

  it('writes an empty bigint[] with no dimensions and empty text as a zero-length value, not NULL', () => {
    const w = new BinaryCopyWriter([
      { name: 'a', type: 'int8[]' },
      { name: 't', type: 'text' },
    ]);
    w.row([new Int32Array(0), '']);
    expect(all(w)).toEqual(
      Buffer.concat([
        SIGNATURE,
        int32(0),
        int32(0),
        int16(2),
        field(Buffer.concat([int32(0), int32(0), int32(20)])),
        int32(0),
        int16(-1),
      ]),
    );
  });

  it('writes Int8Slots as a bigint[] of zeros and fills them later as if written then, across chunks and takes', () => {
    const columns: CopyColumn[] = [
      { name: 't', type: 'text' },
      { name: 'ids', type: 'int8[]' },
    ];
    // rows long enough that the writer's data spans several chunks, taken as it goes
    const rows = Array.from({ length: 40 }, (_, i) => ({
      text: 'x'.repeat(i * 1500),
      ids: [...Array(i % 4).keys()].map((k) => BigInt(i * 10 + k)),
    }));
    const slotted = new BinaryCopyWriter(columns, { framed: false });
    const pieces: Buffer[] = [];
    for (const r of rows) {
      slotted.row([r.text, new Int8Slots(r.ids.length)]);
      if (slotted.pendingBytes > 30_000) pieces.push(...slotted.take());
    }
    pieces.push(...slotted.take());
    expect(pieces.length).toBeGreaterThan(2);
    const values = rows.flatMap((r) => r.ids);
    expect(slotted.slotOffsets()).toHaveLength(values.length);
    fillInt8Slots(
      pieces,
      Uint32Array.from(slotted.slotOffsets()),
      values,
      values.map((_, i) => i),
    );
    const direct = new BinaryCopyWriter(columns, { framed: false });
    const halves = (ids: bigint[]) =>
      Int32Array.from(ids.flatMap((id) => [Number(id >> 32n), Number(id & 0xffffffffn) | 0]));
    for (const r of rows) direct.row([r.text, halves(r.ids)]);
    expect(Buffer.concat(pieces).equals(Buffer.concat(direct.take()))).toBe(true);
  });

  it('hands over complete chunks as it goes, and the chunks together are the same bytes', () => {
    const columns: CopyColumn[] = [
      { name: 'j', type: 'jsonb' },
      { name: 't', type: 'text' },
    ];
    const big = JSON.stringify({ prompt: 'é'.repeat(50_000) + 'x'.repeat(150_000) });
    const rows = Array.from({ length: 12 }, (_, i) => [big, `row ${i} ${'ü'.repeat(i * 100)}`]);
    const streamed = new BinaryCopyWriter(columns);
    const chunks: Buffer[] = [];
    for (const r of rows) {
      streamed.row(r);
      if (streamed.pendingBytes > 100_000) chunks.push(...streamed.take());
    }
    chunks.push(...streamed.take(true));
    expect(chunks.length).toBeGreaterThan(5);
    const once = new BinaryCopyWriter(columns);
    for (const r of rows) once.row(r);
    // (Buffer.equals: a deep toEqual over megabytes takes a minute)
    expect(Buffer.concat(chunks).equals(all(once))).toBe(true);
    // and each value is where its length says: walk the rows back
    const out = Buffer.concat(chunks);
    let at = SIGNATURE.length + 8;
    for (const r of rows) {
      expect(out.readInt16BE(at)).toBe(2);
      at += 2;
      const jl = out.readInt32BE(at);
      expect(out[at + 4]).toBe(1);
      expect(out.subarray(at + 5, at + 4 + jl).toString('utf8')).toBe(r[0]);
      at += 4 + jl;
      const tl = out.readInt32BE(at);
      expect(out.subarray(at + 4, at + 4 + tl).toString('utf8')).toBe(r[1]);
      at += 4 + tl;
    }
    expect(out.readInt16BE(at)).toBe(-1);
  });

  it('writes each fixed-size value whole where its length says, also where it starts a new chunk', () => {
    const columns: CopyColumn[] = [
      { name: 'i4', type: 'int4' },
      { name: 'i8', type: 'int8' },
      { name: 'b', type: 'bool' },
      { name: 'f', type: 'float8' },
    ];
    // 39 bytes a row: the 256 KiB chunks end inside every kind of field over this many rows
    const rows = Array.from({ length: 60_000 }, (_, i) => [i + 1, BigInt(i) * 1_000_003n + 1n, i % 2 === 0, i + 0.5]);
    const w = new BinaryCopyWriter(columns);
    for (const r of rows) w.row(r);
    const chunks = w.take(true);
    expect(chunks.length).toBeGreaterThan(5);
    const out = Buffer.concat(chunks);
    let at = SIGNATURE.length + 8;
    for (const [i4, i8, b, f] of rows) {
      expect(out.readInt16BE(at)).toBe(4);
      expect([out.readInt32BE(at + 2), out.readInt32BE(at + 6)]).toEqual([4, i4]);
      expect([out.readInt32BE(at + 10), out.readBigInt64BE(at + 14)]).toEqual([8, i8]);
      expect([out.readInt32BE(at + 22), out[at + 26]]).toEqual([1, b ? 1 : 0]);
      expect([out.readInt32BE(at + 27), out.readDoubleBE(at + 31)]).toEqual([8, f]);
      at += 39;
    }
    expect(out.readInt16BE(at)).toBe(-1);
  });

  it('writes a value that writes its own UTF-8 as the same bytes as its text, across chunks', () => {
    // pieces as a JSON writer hands them over: bytes (the escaper's) and text, short and long
    const pieces = ['{"prompt":', Buffer.from(`"${'x'.repeat(300_000)}"`), ',"é":', Buffer.from('"ü"'), '}'];
    const source: Utf8Source = {
      writeUtf8: (sink: ByteSink) => {
        for (const p of pieces)
          if (typeof p === 'string') sink.utf8(p);
          else sink.bytes(p);
      },
    };
    const text = pieces.map(String).join('');
    const columns: CopyColumn[] = [
      { name: 'j', type: 'jsonb' },
      { name: 't', type: 'text' },
      { name: 'n', type: 'int4' },
    ];
    for (const lead of [0, 1, 200_000, 262_110, 262_116, 262_119]) {
      // lead-in texts that leave room for the length at the end of a 256 KiB chunk, or not quite
      const own = new BinaryCopyWriter([{ name: 'x', type: 'text' }, ...columns]);
      const plain = new BinaryCopyWriter([{ name: 'x', type: 'text' }, ...columns]);
      own.row(['a'.repeat(lead), source, source, 7]);
      plain.row(['a'.repeat(lead), text, text, 7]);
      expect(Buffer.concat(own.take(true)).equals(all(plain)), `lead ${lead}`).toBe(true);
    }
  });

  it('makes room for a long text a value writes as for a text: measured, not three bytes per character', () => {
    const prompt = `${'x'.repeat(600_000)}’`; // not ASCII: JSON writers hand such text over whole, as a string
    const source: Utf8Source = { writeUtf8: (sink: ByteSink) => sink.utf8(prompt) };
    const w = new BinaryCopyWriter([{ name: 'j', type: 'jsonb' }]);
    for (let i = 0; i < 3; i++) w.row([source]);
    const pieces = w.take(true);
    const data = pieces.reduce((n, p) => n + p.length, 0);
    // no chunk made three times the size of the text it holds
    expect(Math.max(...pieces.map((p) => p.buffer.byteLength))).toBeLessThan(2 * Buffer.byteLength(prompt));
    expect(data).toBe(19 + 3 * (2 + 4 + 1 + Buffer.byteLength(prompt)) + 2);
  });

  it('refuses a row with the wrong number of values', () => {
    expect(() => new BinaryCopyWriter([{ name: 'a', type: 'text' }]).row(['a', 'b'])).toThrow(
      'COPY row has 2 values for 1 columns',
    );
  });
});
