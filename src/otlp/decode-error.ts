/**
 * @module otlp/decode-error
 * The one error decode throws: the request as a whole cannot be read, so retrying the same
 * bytes can never succeed (HTTP 400 / gRPC INVALID_ARGUMENT). Spans that decode but carry
 * unusable ids are not errors; they come back as rejections for partial_success.
 */
import { IngestError } from '../errors.js';

export class OtlpDecodeError extends IngestError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('bad_input', message, options);
    this.name = 'OtlpDecodeError';
  }
}

/**
 * A guess at why a body did not decode, for the error message: the two usual causes are a
 * body in the other encoding (wrong Content-Type) and a compressed body sent without
 * Content-Encoding.
 */
export function bodyHint(body: Uint8Array, expected: 'protobuf' | 'json'): string {
  if (body.length >= 2 && body[0] === 0x1f && body[1] === 0x8b) {
    return ' (the body is gzip-compressed; send it with Content-Encoding: gzip)';
  }
  if (expected === 'protobuf' && body[0] === 0x7b)
    return ' (the body looks like JSON; send it with Content-Type: application/json)';
  // 0x0a: field 1, length-delimited, how every non-empty Export request starts.
  if (expected === 'json' && body[0] === 0x0a)
    return ' (the body looks like protobuf; send it with Content-Type: application/x-protobuf)';
  return '';
}
