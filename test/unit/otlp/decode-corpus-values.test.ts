/**
 * Value-for-value agreement with an independent decode of the same captures (decoded.json
 * in test/fixtures/corpus, made by @opentelemetry/otlp-transformer). Reads only the
 * repository, so every checkout runs the same checks.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { decodeLogsRequest, decodeTraceRequest } from '../../../src/otlp/decode.js';
import type { AttributeValue, Attributes } from '../../../src/spans/span-record.js';
import { captureRequests, FIXTURES, scenarios } from './helpers.js';

const CORPUS = path.resolve(FIXTURES, '../corpus');
const SHORTENED = /\u2026\[shortened for display: (\d+) chars in total; see the raw capture\]$/;

/** Our value in the corpus decoder's display form; long strings compared by prefix. */
function agrees(ours: AttributeValue, theirs: unknown): boolean {
  if (typeof ours === 'string' && typeof theirs === 'string') {
    const m = SHORTENED.exec(theirs);
    return m ? ours.length === Number(m[1]) && ours.startsWith(theirs.slice(0, m.index)) : ours === theirs;
  }
  if (typeof ours === 'bigint') return String(ours) === String(theirs);
  if (Array.isArray(ours))
    return Array.isArray(theirs) && ours.length === theirs.length && ours.every((v, i) => agrees(v, theirs[i]));
  if (ours !== null && typeof ours === 'object' && !(ours instanceof Uint8Array)) {
    return typeof theirs === 'object' && theirs !== null && attributesAgree(ours, theirs as Record<string, unknown>);
  }
  return ours === theirs;
}

function attributesAgree(ours: Attributes, theirs: Record<string, unknown>): boolean {
  const keys = Object.keys(ours);
  return keys.length === Object.keys(theirs).length && keys.every((k) => agrees(ours[k], theirs[k]));
}

interface DecodedRequest {
  file: string;
  resources: { resource: Record<string, unknown>; scopes: { spans?: DecodedSpan[]; logRecords?: DecodedLog[] }[] }[];
}
interface DecodedSpan {
  attributes: Record<string, unknown>;
  status: { message: string };
  events: { attributes: Record<string, unknown> }[];
}
interface DecodedLog {
  attributes: Record<string, unknown>;
  body: unknown;
}

describe('agreement with an independent decode of the captures', () => {
  it.each(scenarios())('%s: every attribute, event, status message and log body has the same value', (scenario) => {
    const source = path.join(CORPUS, scenario, 'decoded.json');
    expect(existsSync(source), source).toBe(true);
    const decoded = JSON.parse(readFileSync(source, 'utf8')) as {
      requests: DecodedRequest[];
    };
    for (const request of captureRequests(scenario)) {
      const theirs = decoded.requests.find((r) => r.file === request.file);
      expect(theirs, request.file).toBeDefined();
      const flat = theirs!.resources.flatMap((res) =>
        res.scopes.flatMap((s) => [...(s.spans ?? []), ...(s.logRecords ?? [])].map((x) => ({ res, x }))),
      );
      if (request.signal === 'traces') {
        const { spans } = decodeTraceRequest(request.body, request.encoding);
        expect(spans).toHaveLength(flat.length);
        spans.forEach((span, i) => {
          const { res, x } = flat[i] as { res: { resource: Record<string, unknown> }; x: DecodedSpan };
          expect(attributesAgree(span.attributes, x.attributes), `${request.file} span ${i} attributes`).toBe(true);
          expect(attributesAgree(span.resource, res.resource), `${request.file} span ${i} resource`).toBe(true);
          expect(span.status.message).toBe(x.status.message);
          span.events.forEach((e, j) => expect(attributesAgree(e.attributes, x.events[j].attributes)).toBe(true));
        });
      } else {
        const { logs } = decodeLogsRequest(request.body, request.encoding);
        expect(logs).toHaveLength(flat.length);
        logs.forEach((log, i) => {
          const x = flat[i].x as DecodedLog;
          expect(attributesAgree(log.attributes, x.attributes), `${request.file} log ${i} attributes`).toBe(true);
          expect(agrees(log.body, x.body), `${request.file} log ${i} body`).toBe(true);
        });
      }
    }
  });
});
