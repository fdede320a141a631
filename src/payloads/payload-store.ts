/**
 * @module payloads/payload-store
 * The payload store port (docs/architecture.md "Payload store"): content-addressed and write-once. A
 * payload is named by the SHA-256 of its bytes, "sha256/<64 lower-case hex>", so the same
 * bytes always get the same name whichever backend stores them, and a second put of the same
 * bytes is a no-op. Every backend verifies the hash when it reads: bytes that no longer hash
 * to their name are reported as PayloadIntegrityError, never served as if they were intact.
 *
 * Backends: fs-payload-store (default), pg-payload-store (single-database deployments),
 * memory-payload-store (tests). One contract suite (test/contracts/payload-store.contract.ts)
 * runs against all of them.
 */
import { createHash } from 'node:crypto';
import type { PayloadRef } from '../normalize/step.js';

export type { PayloadRef } from '../normalize/step.js';

export interface PayloadStore {
  /**
   * Stores bytes and returns their name "sha256/<hex>". Idempotent: the same bytes give the
   * same name and storing them again changes nothing. mediaType is metadata; backends that
   * have no place for it (the filesystem) ignore it, because the bytes are the identity.
   */
  put(bytes: Uint8Array, mediaType?: string): Promise<string>;
  /** The bytes named by ref, verified; undefined when this store does not hold them. */
  get(ref: string): Promise<Uint8Array | undefined>;
  /** Whether the bytes are held. Cheap: does not read or verify them. */
  has(ref: string): Promise<boolean>;
  /** Erases the bytes (e.g. a data-subject request); true when they were held. */
  delete(ref: string): Promise<boolean>;
}

export const PAYLOAD_REF_ALGORITHM = 'sha256';
export const DEFAULT_PAYLOAD_MEDIA_TYPE = 'application/octet-stream';

// Lower-case only: one payload must have exactly one name, and the hex becomes a file name,
// so nothing outside [0-9a-f] (no "..", no "/") may ever reach a path.
const REF_PATTERN = /^sha256\/([0-9a-f]{64})$/;

/** A string that is not a well-formed payload name. Retrying never helps (bad input). */
export class InvalidPayloadRefError extends TypeError {
  constructor(readonly ref: unknown) {
    super(`invalid payload reference ${describe(ref)}: expected "sha256/" and 64 lower-case hex digits`);
    this.name = 'InvalidPayloadRefError';
  }
}

/** Stored bytes that do not hash to their name: corruption, or tampering, in the backend. */
export class PayloadIntegrityError extends Error {
  constructor(
    readonly ref: string,
    readonly actualRef: string,
    readonly backend: string,
  ) {
    super(`payload ${ref} in the ${backend} payload store is corrupt: its bytes hash to ${actualRef}`);
    this.name = 'PayloadIntegrityError';
  }
}

/**
 * The payload store cannot write or read now (a full disk, a read-only or unwritable
 * directory, an I/O error): nothing was stored under the name, and a retry once the fault is
 * cleared succeeds.
 */
export class PayloadStoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PayloadStoreUnavailableError';
  }
}

export interface ParsedPayloadRef {
  algorithm: typeof PAYLOAD_REF_ALGORITHM;
  /** 64 lower-case hex digits */
  hex: string;
}

/** Splits a payload name into its parts; throws InvalidPayloadRefError when malformed. */
export function parsePayloadRef(ref: string): ParsedPayloadRef {
  const match = typeof ref === 'string' ? REF_PATTERN.exec(ref) : null;
  if (!match) throw new InvalidPayloadRefError(ref);
  return { algorithm: PAYLOAD_REF_ALGORITHM, hex: match[1] };
}

export function isValidPayloadRef(ref: unknown): ref is string {
  return typeof ref === 'string' && REF_PATTERN.test(ref);
}

/**
 * Whether value is a reference object {"$payload": "sha256/<hex>"}: exactly that one key and
 * a well-formed name. Anything else (extra keys, a malformed name) is ordinary data, so user
 * content that merely has a "$payload" key is left alone.
 */
export function isPayloadRef(value: unknown): value is PayloadRef {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value);
  return keys.length === 1 && keys[0] === '$payload' && isValidPayloadRef((value as PayloadRef).$payload);
}

export function payloadRef(ref: string): PayloadRef {
  parsePayloadRef(ref);
  return { $payload: ref };
}

/** The name the given bytes are stored under. */
export function payloadRefOf(bytes: Uint8Array): string {
  return `${PAYLOAD_REF_ALGORITHM}/${createHash('sha256').update(bytes).digest('hex')}`;
}

/** Returns bytes when they hash to ref, else throws PayloadIntegrityError. */
export function verifyPayload(ref: string, bytes: Uint8Array, backend: string): Uint8Array {
  const actual = payloadRefOf(bytes);
  if (actual !== ref) throw new PayloadIntegrityError(ref, actual, backend);
  return bytes;
}

/**
 * A plain Uint8Array view of the same memory. pg and node:fs hand back Buffers; callers get
 * one type from every backend, so a comparison never depends on which backend answered.
 */
export function asPlainBytes(bytes: Uint8Array): Uint8Array {
  return Object.getPrototypeOf(bytes) === Uint8Array.prototype
    ? bytes
    : new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

function describe(ref: unknown): string {
  if (typeof ref !== 'string') return `of type ${ref === null ? 'null' : typeof ref}`;
  return JSON.stringify(ref.length > 80 ? `${ref.slice(0, 80)}…` : ref);
}
