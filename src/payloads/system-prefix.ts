/**
 * @module payloads/system-prefix
 * The one shape offloading gives a list rather than a bare reference: an llm request stored
 * as [system…, {"$payload": ref-of-the-rest}]. Offload writes it and resolve reads it back,
 * so both use these predicates and cannot drift apart on what counts as a system message.
 */
import type { JsonValue } from '../json/json-value.js';
import { isPayloadRef } from './payload-store.js';

export function isSystemMessage(value: JsonValue | undefined): boolean {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && value.role === 'system';
}

/** How many elements at the start of the list are {"role": "system", …} messages. */
export function countLeadingSystemMessages(list: readonly JsonValue[]): number {
  let count = 0;
  while (count < list.length && isSystemMessage(list[count])) count += 1;
  return count;
}

/** Whether list is [system…, {"$payload": …}] with at least one system message. */
export function isSystemPrefixedRef(list: readonly JsonValue[]): boolean {
  return (
    list.length >= 2 && isPayloadRef(list[list.length - 1]) && countLeadingSystemMessages(list) === list.length - 1
  );
}
