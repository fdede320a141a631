/**
 * @module otlp/count-records
 * Counts the spans of an ExportTraceServiceRequest, or the log records of an
 * ExportLogsServiceRequest, from the protobuf wire format alone: both nest their records at
 * field 1 → field 2 → field 2 (resource → scope → record), and the walk skips each record's
 * bytes without decoding them, so a request can be refused for its count before it is decoded.
 * On malformed bytes it stops and returns what it counted; decoding then says what is wrong.
 */

export function countOtlpRecords(body: Uint8Array): number {
  return countWithin(body, 0, body.length, 0);
}

/** The fields each level nests its records in: resource (1), scope (2), record (2). */
const NESTING = [1, 2, 2];

/**
 * The records between start and end at `depth` of NESTING. Recursion, not callbacks made per
 * request (docs/architecture.md, "Decisions and why").
 */
function countWithin(body: Uint8Array, start: number, end: number, depth: number): number {
  let count = 0;
  let at = start;
  while (at < end) {
    const tag = varint(body, at, end);
    if (!tag) return count;
    at = tag.next;
    switch (tag.value % 8) {
      case 0: {
        const skipped = varint(body, at, end);
        if (!skipped) return count;
        at = skipped.next;
        break;
      }
      case 1:
        at += 8;
        break;
      case 2: {
        const length = varint(body, at, end);
        if (!length || length.next + length.value > end) return count;
        if (Math.floor(tag.value / 8) === NESTING[depth])
          count +=
            depth === NESTING.length - 1 ? 1 : countWithin(body, length.next, length.next + length.value, depth + 1);
        at = length.next + length.value;
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        return count;
    }
  }
  return count;
}

function varint(body: Uint8Array, at: number, end: number): { value: number; next: number } | undefined {
  let value = 0;
  let scale = 1;
  for (let i = at; i < end && i < at + 10; i++) {
    value += (body[i] & 0x7f) * scale;
    if (body[i] < 0x80) return { value, next: i + 1 };
    scale *= 128;
  }
  return undefined;
}
