/**
 * @module payloads
 * The payload store port, its three backends, and the offload/resolve format.
 * IMPORTANT: exports added here are the folder's public surface; keep them named.
 */
export {
  type PayloadStore,
  type PayloadRef,
  type ParsedPayloadRef,
  PAYLOAD_REF_ALGORITHM,
  DEFAULT_PAYLOAD_MEDIA_TYPE,
  InvalidPayloadRefError,
  PayloadIntegrityError,
  parsePayloadRef,
  isValidPayloadRef,
  isPayloadRef,
  payloadRef,
  payloadRefOf,
  verifyPayload,
} from './payload-store.js';
export { createFsPayloadStore, type FsPayloadStoreSettings } from './fs-payload-store.js';
export { createPgPayloadStore, type PgPayloadStoreDeps } from './pg-payload-store.js';
export { createMemoryPayloadStore, type MemoryPayloadStoreSettings } from './memory-payload-store.js';
export {
  offloadLargeValues,
  JSON_MEDIA_TYPE,
  type OffloadableDraft,
  type OffloadedPayload,
  type OffloadResult,
} from './offload.js';
export {
  resolvePayloads,
  createPayloadResolver,
  type PayloadResolver,
  type ResolveOptions,
  type ResolveResult,
  type UnreadablePayload,
  type UnreadableReason,
} from './resolve-payloads.js';
export { isSystemMessage, countLeadingSystemMessages, isSystemPrefixedRef } from './system-prefix.js';
export { storedReferenceOf, mistakableForReference, type StoredReference } from './stored-reference.js';
