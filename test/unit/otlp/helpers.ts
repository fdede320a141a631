/**
 * Test helpers for the OTLP wire layer: the copied corpus captures, and requests built
 * with the protobufjs types from our own .proto files (the real wire format, not a mock).
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { otlpTypes } from '../../../src/otlp/proto.js';

export const FIXTURES = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../fixtures/otlp');

export interface CaptureRequest {
  scenario: string; // <layout>/<scenario>
  file: string;
  signal: 'traces' | 'logs';
  encoding: 'protobuf' | 'json';
  transport: 'http' | 'grpc';
  /** the decoded-from bytes: gunzipped, as the HTTP layer hands them to decode */
  body: Buffer;
}

interface IndexLine {
  transport: 'http' | 'grpc';
  signal: 'traces' | 'logs';
  contentType: string;
  contentEncoding: string | null;
  file: string;
}

export function scenarios(): string[] {
  return readdirSync(FIXTURES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((layout) => readdirSync(path.join(FIXTURES, layout.name)).map((s) => `${layout.name}/${s}`))
    .sort();
}

export function captureRequests(scenario: string): CaptureRequest[] {
  const dir = path.join(FIXTURES, scenario);
  return readFileSync(path.join(dir, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as IndexLine)
    .map((line) => {
      const raw = readFileSync(path.join(dir, line.file));
      return {
        scenario,
        file: line.file,
        signal: line.signal,
        encoding: line.contentType === 'application/json' ? 'json' : 'protobuf',
        transport: line.transport,
        body: line.contentEncoding === 'gzip' ? gunzipSync(raw) : raw,
      } satisfies CaptureRequest;
    });
}

/** expected.json: the corpus's independent decode, summarized (see make-expected.mjs). */
export function expectedRecords(scenario: string): Record<string, Record<string, unknown>[]> {
  return (
    JSON.parse(readFileSync(path.join(FIXTURES, scenario, 'expected.json'), 'utf8')) as {
      files: Record<string, Record<string, unknown>[]>;
    }
  ).files;
}

export const TRACE_ID = '5b8efff798038103d269b633813fc60c';
export const SPAN_ID = 'eee19b7ec3c1b174';
export const PARENT_ID = 'eee19b7ec3c1b173';

export const hex = (s: string): Buffer => Buffer.from(s, 'hex');

/** A protobuf ExportTraceServiceRequest from a plain object in protobufjs fromObject form
 * (camelCase; bytes as Buffers; 64-bit values as numbers or decimal strings). */
export function traceRequestBytes(request: object): Uint8Array {
  const { ExportTraceServiceRequest: T } = otlpTypes();
  return T.encode(T.fromObject(request)).finish();
}

export function logsRequestBytes(request: object): Uint8Array {
  const { ExportLogsServiceRequest: T } = otlpTypes();
  return T.encode(T.fromObject(request)).finish();
}

export const json = (value: unknown): Uint8Array => Buffer.from(JSON.stringify(value));

/** One resource, one scope, these spans (protobufjs form). */
export function oneScope(
  spans: object[],
  resourceAttributes: object[] = [{ key: 'service.name', value: { stringValue: 'svc' } }],
): object {
  return {
    resourceSpans: [
      {
        resource: { attributes: resourceAttributes },
        scopeSpans: [{ scope: { name: 'lib', version: '1.0.0' }, spans }],
      },
    ],
  };
}

/** A minimal valid span in protobufjs form. */
export function pbSpan(extra: object = {}): object {
  return {
    traceId: hex(TRACE_ID),
    spanId: hex(SPAN_ID),
    name: 'op',
    startTimeUnixNano: '1796032240962000000',
    endTimeUnixNano: '1796032240982105970',
    ...extra,
  };
}

/** The same span in OTLP/JSON form. */
export function jsonSpan(extra: object = {}): object {
  return {
    traceId: TRACE_ID.toUpperCase(),
    spanId: SPAN_ID,
    name: 'op',
    startTimeUnixNano: '1796032240962000000',
    endTimeUnixNano: '1796032240982105970',
    ...extra,
  };
}
