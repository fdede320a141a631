/**
 * @module tapes/log-key
 * A log record has no id. Two records are the same record when their trace id, span id,
 * time, event name, attributes and body are the same AND they hold the same position among
 * identical records of their request: a resent request then adds nothing, while two
 * identical records sent together are both kept.
 */
import { createHash } from 'node:crypto';
import { renderJson } from '../json/canonical.js';
import type { LogRecord } from '../spans/span-record.js';

export function logRecordKeys(logs: readonly LogRecord[]): Buffer[] {
  const seen = new Map<string, number>();
  return logs.map((log) => {
    const identity = renderJson([log.traceId, log.spanId, log.timeUnixNano, log.eventName, log.attributes, log.body]);
    const ordinal = seen.get(identity) ?? 0;
    seen.set(identity, ordinal + 1);
    return createHash('sha256').update(identity).update(`#${ordinal}`).digest();
  });
}
