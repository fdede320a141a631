/**
 * Test helper: loads a corpus capture (test/fixtures/corpus/<layout>/<scenario>/) as the
 * protocol-free records the pipeline consumes.
 *
 * Captures are read from decoded.json, the corpus's readable decode (same spans for every
 * encoding), which keeps these tests independent of our own OTLP decoder. decoded.json
 * shortens strings over 4 KiB for display; where it did, the raw bodies are decoded with
 * src/otlp/decode.ts instead when the capture keeps them (big-prompt keeps them for one
 * layout). A capture still shortened says so (`shortened`), and tests skip content
 * equality for it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeLogsRequest, decodeTraceRequest } from '../../src/otlp/decode.js';
import type {
  AttributeValue,
  Attributes,
  LogRecord,
  SpanKindName,
  SpanRecord,
  StatusCodeName,
} from '../../src/spans/span-record.js';

export const FIXTURE_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'corpus');
const SHORTENED_MARK = '…[shortened for display:';

export interface CaptureRef {
  layout: string;
  scenario: string;
  dir: string;
}

export interface GroundTruthStep {
  type: 'model_call' | 'tool_call' | 'agent_error' | string;
  index: number;
  provider?: 'openai' | 'anthropic';
  stream?: boolean;
  request?: { [k: string]: unknown };
  response?: { [k: string]: unknown };
  error?: unknown;
  tool_call_id?: string;
  name?: string;
  arguments?: unknown;
  result?: unknown;
  result_as_sent?: string;
}

export interface GroundTruth {
  layout: string;
  scenario: string;
  session_id: string;
  sdk: string;
  content_capture: boolean;
  steps: GroundTruthStep[];
  final_answer?: string;
}

export interface Capture extends CaptureRef {
  spans: SpanRecord[];
  logs: LogRecord[];
  /** true when some string was shortened for display: content equality cannot be checked */
  shortened: boolean;
  /** where the records came from */
  source: 'decoded.json' | 'raw';
  groundTruth: GroundTruth;
}

/** Every <layout>/<scenario> folder holding a ground truth: a capture added later is picked up. */
export function listCaptures(root = FIXTURE_ROOT): CaptureRef[] {
  const out: CaptureRef[] = [];
  for (const layout of readdirSync(root, { withFileTypes: true })) {
    if (!layout.isDirectory()) continue;
    for (const scenario of readdirSync(path.join(root, layout.name), { withFileTypes: true })) {
      const dir = path.join(root, layout.name, scenario.name);
      if (scenario.isDirectory() && existsSync(path.join(dir, 'ground-truth.json'))) {
        out.push({ layout: layout.name, scenario: scenario.name, dir });
      }
    }
  }
  return out.sort((a, b) => `${a.layout}/${a.scenario}`.localeCompare(`${b.layout}/${b.scenario}`));
}

type Json = any; // decoded.json is test data of a known shape; read it loosely

const KINDS: Record<string, SpanKindName> = {
  SPAN_KIND_UNSPECIFIED: 'unspecified',
  UNSPECIFIED: 'unspecified',
  INTERNAL: 'internal',
  SERVER: 'server',
  CLIENT: 'client',
  PRODUCER: 'producer',
  CONSUMER: 'consumer',
};
const CODES: Record<string, StatusCodeName> = { UNSET: 'unset', OK: 'ok', ERROR: 'error' };

function attrs(v: Json): Attributes {
  return (v ?? {}) as Attributes;
}

function serviceName(resource: Attributes): string | null {
  const s = resource['service.name'];
  return typeof s === 'string' ? s : null;
}

/** decoded.json → SpanRecord[] / LogRecord[]; spans exported several ways are kept once. */
export function recordsFromDecoded(decoded: Json): { spans: SpanRecord[]; logs: LogRecord[] } {
  const spans: SpanRecord[] = [];
  const logs: LogRecord[] = [];
  const seen = new Set<string>();
  for (const req of decoded.requests) {
    for (const rs of req.resources) {
      const resource = attrs(rs.resource);
      for (const ss of rs.scopes) {
        const scope = {
          name: ss.scope?.name ?? '',
          version: ss.scope?.version ?? '',
          attributes: attrs(ss.scope?.attributes),
        };
        for (const s of ss.spans ?? []) {
          const key = `${s.traceId}/${s.spanId}`;
          if (seen.has(key)) continue;
          seen.add(key);
          spans.push({
            traceId: s.traceId,
            spanId: s.spanId,
            parentSpanId: s.parentSpanId || null,
            traceState: s.traceState ?? '',
            flags: s.flags ?? 0,
            name: s.name,
            kind: KINDS[s.kind] ?? 'unspecified',
            startTimeUnixNano: BigInt(s.startTimeUnixNano),
            endTimeUnixNano: BigInt(s.endTimeUnixNano),
            attributes: attrs(s.attributes),
            droppedAttributesCount: s.droppedAttributesCount ?? 0,
            events: (s.events ?? []).map((e: Json) => ({
              timeUnixNano: BigInt(e.timeUnixNano),
              name: e.name,
              attributes: attrs(e.attributes),
              droppedAttributesCount: 0,
            })),
            droppedEventsCount: 0,
            links: (s.links ?? []).map((l: Json) => ({
              traceId: l.traceId,
              spanId: l.spanId,
              traceState: l.traceState ?? '',
              attributes: attrs(l.attributes),
              droppedAttributesCount: 0,
              flags: l.flags ?? 0,
            })),
            droppedLinksCount: 0,
            status: { code: CODES[s.status?.code] ?? 'unset', message: s.status?.message ?? '' },
            resource,
            resourceDroppedAttributesCount: 0,
            scope,
            serviceName: serviceName(resource),
          });
        }
        for (const l of ss.logRecords ?? []) {
          const eventName =
            l.eventName || (typeof l.attributes?.['event.name'] === 'string' ? l.attributes['event.name'] : null);
          logs.push({
            traceId: l.traceId || null,
            spanId: l.spanId || null,
            timeUnixNano: BigInt(l.timeUnixNano ?? 0),
            observedTimeUnixNano: BigInt(l.observedTimeUnixNano ?? 0),
            severityNumber: l.severityNumber ?? 0,
            severityText: l.severityText ?? '',
            eventName,
            body: (l.body ?? null) as AttributeValue,
            attributes: attrs(l.attributes),
            droppedAttributesCount: 0,
            flags: l.flags ?? 0,
            resource,
            scope,
            serviceName: serviceName(resource),
          });
        }
      }
    }
  }
  return { spans, logs };
}

function hasShortened(v: unknown): boolean {
  if (typeof v === 'string') return v.includes(SHORTENED_MARK);
  if (Array.isArray(v)) return v.some(hasShortened);
  if (v && typeof v === 'object') return Object.values(v).some(hasShortened);
  return false;
}

export function readGroundTruth(dir: string): GroundTruth {
  return JSON.parse(readFileSync(path.join(dir, 'ground-truth.json'), 'utf8')) as GroundTruth;
}

interface RequestEntry {
  file: string;
  signal: 'traces' | 'logs';
  contentType: string;
  contentEncoding: string | null;
}

/**
 * The raw request bodies decoded by src/otlp/decode.ts, or undefined when the capture does
 * not keep them all (big-prompt keeps its bodies for one layout only).
 */
export function recordsFromRaw(dir: string): { spans: SpanRecord[]; logs: LogRecord[] } | undefined {
  const entries = readFileSync(path.join(dir, 'requests.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as RequestEntry);
  if (!entries.length || !entries.every((e) => existsSync(path.join(dir, e.file)))) return undefined;
  const spans: SpanRecord[] = [];
  const logs: LogRecord[] = [];
  const seen = new Set<string>();
  for (const e of entries) {
    let body: Uint8Array = readFileSync(path.join(dir, e.file));
    if (e.contentEncoding === 'gzip' || e.file.endsWith('.gz')) body = gunzipSync(body);
    const encoding = e.contentType.includes('json') ? 'json' : 'protobuf';
    if (e.signal === 'logs') {
      logs.push(...decodeLogsRequest(body, encoding).logs);
      continue;
    }
    for (const s of decodeTraceRequest(body, encoding).spans) {
      const key = `${s.traceId}/${s.spanId}`;
      if (!seen.has(key)) {
        seen.add(key);
        spans.push(s);
      }
    }
  }
  return { spans, logs };
}

/**
 * Reads decoded.json (independent of our decoder, so normalizer tests do not depend on it);
 * where it shortened a string, decodes the raw bodies instead when the capture has them.
 */
export async function loadCapture(ref: CaptureRef): Promise<Capture> {
  const decoded = JSON.parse(readFileSync(path.join(ref.dir, 'decoded.json'), 'utf8'));
  const groundTruth = readGroundTruth(ref.dir);
  const shortened = hasShortened(decoded);
  if (shortened) {
    const raw = recordsFromRaw(ref.dir);
    if (raw) return { ...ref, ...raw, shortened: false, source: 'raw', groundTruth };
  }
  return { ...ref, ...recordsFromDecoded(decoded), shortened, source: 'decoded.json', groundTruth };
}
