/**
 * @module otlp/count-records
 * Counts the spans of an ExportTraceServiceRequest, or the log records of an
 * ExportLogsServiceRequest, from the protobuf wire format alone: both nest their records at
 * field 1 → field 2 → field 2 (resource → scope → record), and the walk skips each record's
 * bytes without decoding them, so a request can be refused for its count before it is decoded.
 * On malformed bytes it stops and returns what it counted; decoding then says what is wrong.
 */

export function countOtlpRecords(body: Uint8Array): number {
  let count = 0;
  eachField(body, 0, body.length, 1, (resourceStart, resourceEnd) =>
    eachField(body, resourceStart, resourceEnd, 2, (scopeStart, scopeEnd) =>
      eachField(body, scopeStart, scopeEnd, 2, () => {
        count++;
      }),
    ),
  );
  return count;
}

/** Calls visit with the bounds of each length-delimited field `field` between start and end. */
function eachField(
  body: Uint8Array,
  start: number,
  end: number,
  field: number,
  visit: (start: number, end: number) => void,
): void {
  let at = start;
  while (at < end) {
    const tag = varint(body, at, end);
    if (!tag) return;
    at = tag.next;
    switch (tag.value % 8) {
      case 0: {
        const skipped = varint(body, at, end);
        if (!skipped) return;
        at = skipped.next;
        break;
      }
      case 1:
        at += 8;
        break;
      case 2: {
        const length = varint(body, at, end);
        if (!length || length.next + length.value > end) return;
        if (Math.floor(tag.value / 8) === field) visit(length.next, length.next + length.value);
        at = length.next + length.value;
        break;
      }
      case 5:
        at += 4;
        break;
      default:
        return;
    }
  }
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
