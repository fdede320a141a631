/**
 * Payload names and reference objects: what counts as a reference is a format decision every
 * reader of a tape depends on, so it is pinned here.
 */
import { describe, expect, it } from 'vitest';
import {
  InvalidPayloadRefError,
  PayloadIntegrityError,
  isPayloadRef,
  isValidPayloadRef,
  parsePayloadRef,
  payloadRef,
  payloadRefOf,
  verifyPayload,
} from '../../../src/payloads/payload-store.js';
import { digestOf } from '../../../src/json/canonical.js';

const hex = 'ab'.repeat(32);
const ref = `sha256/${hex}`;

describe('parsePayloadRef', () => {
  it('splits a well-formed name into algorithm and hex', () => {
    expect(parsePayloadRef(ref)).toEqual({ algorithm: 'sha256', hex });
  });

  it.each([
    ['upper-case hex', `sha256/${'AB'.repeat(32)}`],
    ['63 hex digits', `sha256/${'a'.repeat(63)}`],
    ['65 hex digits', `sha256/${'a'.repeat(65)}`],
    ['a colon separator', `sha256:${hex}`],
    ['a trailing newline', `${ref}\n`],
    ['a path', `sha256/../${hex}`],
    ['the empty string', ''],
  ])('rejects %s with InvalidPayloadRefError naming the input', (_label, bad) => {
    expect(() => parsePayloadRef(bad)).toThrow(InvalidPayloadRefError);
    expect(isValidPayloadRef(bad)).toBe(false);
  });

  it('rejects a non-string without echoing it', () => {
    expect(() => parsePayloadRef(42 as unknown as string)).toThrow('invalid payload reference of type number');
  });
});

describe('isPayloadRef', () => {
  it('accepts {"$payload": name} with exactly that key', () => {
    expect(isPayloadRef({ $payload: ref })).toBe(true);
    expect(isPayloadRef(payloadRef(ref))).toBe(true);
  });

  it.each([
    ['an extra key', { $payload: ref, role: 'user' }],
    ['a malformed name (user data that merely has the key)', { $payload: 'hello' }],
    ['an array', [{ $payload: ref }]],
    ['a bare name', ref],
    ['null', null],
  ])('treats %s as ordinary data', (_label, value) => {
    expect(isPayloadRef(value)).toBe(false);
  });

  it('payloadRef() refuses to build a reference to a malformed name', () => {
    expect(() => payloadRef('sha256/nope')).toThrow(InvalidPayloadRefError);
  });
});

describe('payloadRefOf and verifyPayload', () => {
  it('names canonical JSON bytes with the digest the value has inline', () => {
    const value = { b: [1, 2], a: 'x' };
    const bytes = new TextEncoder().encode('{"a":"x","b":[1,2]}');
    expect(payloadRefOf(bytes)).toBe(`sha256/${digestOf(value)}`);
  });

  it('passes matching bytes through and reports mismatching ones with both names', () => {
    const bytes = new TextEncoder().encode('abc');
    const name = payloadRefOf(bytes);
    expect(verifyPayload(name, bytes, 'test')).toBe(bytes);
    const error = (() => {
      try {
        verifyPayload(ref, bytes, 'test');
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(PayloadIntegrityError);
    expect(error).toMatchObject({ ref, actualRef: name, backend: 'test' });
  });
});
