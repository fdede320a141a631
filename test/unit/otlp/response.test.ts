/**
 * Export responses and error bodies are written in the request's encoding and read back by
 * the real message types; the .proto files load with the services the gRPC server serves.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { LOGS_EXPORT_PATH, otlpProtoDir, otlpTypes, TRACE_EXPORT_PATH } from '../../../src/otlp/proto.js';
import { encodeExportResponse, encodeStatus, partialSuccessFor } from '../../../src/otlp/response.js';

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

describe('export responses', () => {
  it('are empty on full success: zero protobuf bytes, {} in JSON', () => {
    expect(encodeExportResponse('traces', 'protobuf')).toHaveLength(0);
    expect(text(encodeExportResponse('traces', 'json'))).toBe('{}');
    expect(text(encodeExportResponse('logs', 'json', { rejected: 0, errorMessage: '' }))).toBe('{}');
  });

  it('carry partial success in JSON with the int64 count as a string', () => {
    expect(JSON.parse(text(encodeExportResponse('traces', 'json', { rejected: 2, errorMessage: 'bad ids' })))).toEqual({
      partialSuccess: { rejectedSpans: '2', errorMessage: 'bad ids' },
    });
    expect(JSON.parse(text(encodeExportResponse('logs', 'json', { rejected: 1, errorMessage: 'x' })))).toEqual({
      partialSuccess: { rejectedLogRecords: '1', errorMessage: 'x' },
    });
    // A warning: nothing rejected, but something to say.
    expect(JSON.parse(text(encodeExportResponse('traces', 'json', { rejected: 0, errorMessage: 'note' })))).toEqual({
      partialSuccess: { errorMessage: 'note' },
    });
  });

  it('carry partial success in protobuf that the response types read back', () => {
    const { ExportTraceServiceResponse, ExportLogsServiceResponse } = otlpTypes();
    const traces = ExportTraceServiceResponse.toObject(
      ExportTraceServiceResponse.decode(
        encodeExportResponse('traces', 'protobuf', { rejected: 3, errorMessage: 'bad ids' }),
      ),
      { longs: String },
    );
    expect(traces).toEqual({ partialSuccess: { rejectedSpans: '3', errorMessage: 'bad ids' } });
    const logs = ExportLogsServiceResponse.toObject(
      ExportLogsServiceResponse.decode(encodeExportResponse('logs', 'protobuf', { rejected: 1, errorMessage: 'x' })),
      { longs: String },
    );
    expect(logs).toEqual({ partialSuccess: { rejectedLogRecords: '1', errorMessage: 'x' } });
  });
});

describe('error bodies', () => {
  it('are a google.rpc.Status in protobuf or JSON', () => {
    const { Status } = otlpTypes();
    expect(Status.toObject(Status.decode(encodeStatus('protobuf', 3, 'request body is not valid JSON')))).toEqual({
      code: 3,
      message: 'request body is not valid JSON',
    });
    expect(JSON.parse(text(encodeStatus('json', 14, 'database unavailable')))).toEqual({
      code: 14,
      message: 'database unavailable',
    });
  });
});

describe('partialSuccessFor', () => {
  it('reports nothing when nothing was rejected', () => {
    expect(partialSuccessFor('traces', [])).toBeUndefined();
  });

  it('counts every rejection and names the first few, within a bounded message', () => {
    const rejected = Array.from({ length: 1000 }, (_, i) => ({
      index: i,
      reason: `span "s${i}": traceId is all zeros ${'x'.repeat(100)}`,
    }));
    const partial = partialSuccessFor('traces', rejected);
    expect(partial?.rejected).toBe(1000);
    expect(partial?.errorMessage).toMatch(/^1000 spans rejected: #0: span "s0": traceId is all zeros/);
    expect(partial?.errorMessage).toMatch(/and 995 more$/);
    expect(
      partialSuccessFor('logs', [{ index: 4, reason: 'log record: spanId is 2 bytes, expected 8' }])?.errorMessage,
    ).toBe('1 log record rejected: #4: log record: spanId is 2 bytes, expected 8');
  });
});

describe('the .proto files', () => {
  it('are found from the source tree and define the services at the gRPC paths', () => {
    expect(existsSync(path.join(otlpProtoDir(), 'opentelemetry/proto/trace/v1/trace.proto'))).toBe(true);
    const { root } = otlpTypes();
    for (const method of [TRACE_EXPORT_PATH, LOGS_EXPORT_PATH]) {
      const [, service, name] = method.split('/');
      const rpc = root.lookupService(service).methods[name];
      expect(rpc.resolvedRequestType?.name).toMatch(/^Export(Trace|Logs)ServiceRequest$/);
      expect(rpc.resolvedResponseType?.name).toMatch(/^Export(Trace|Logs)ServiceResponse$/);
    }
  });

  it('are loaded once', () => {
    expect(otlpTypes()).toBe(otlpTypes());
  });
});
