/**
 * Text PostgreSQL cannot hold (NUL, a lone UTF-16 surrogate) in any string of a span or log
 * record: span and event names, attribute keys and values, resource and scope attributes, log
 * bodies. jsonb and text columns refuse them; tapedeck stores such spans in full, each such
 * character replaced by U+FFFD (docs/ingest.md), answers 200, and the step and the tape read.
 * Sent as real OTLP/HTTP bodies (JSON escapes and protobuf bytes) to a running tapedeck.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { otlpTypes } from '../../src/otlp/proto.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  JSON_TYPE,
  postOtlp,
  PROTOBUF,
  randomSpanId,
  randomTraceId,
  readExportResponse,
  readLogRows,
  readSpanRows,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
} from '../helpers/tapedeck-server.js';

const NUL = '\u0000';
const LONE_HIGH = '\ud800';
const LONE_LOW = '\udc00';
const REPLACED = '\ufffd';

const str = (s: string) => ({ stringValue: s });
const kv = (key: string, value: unknown) => ({ key, value });

/** An OTLP trace request (as a plain object in the OTLP/JSON mapping) whose strings hold `bad`. */
function traceRequest(traceId: string, spanId: string, run: string, bad: string) {
  return {
    resourceSpans: [
      {
        resource: { attributes: [kv('service.name', str('unusual-text')), kv(`host${bad}`, str(`box${bad}`))] },
        scopeSpans: [
          {
            scope: { name: 'unusual-text', version: '1', attributes: [kv('scope.note', str(`s${bad}`))] },
            spans: [
              {
                traceId,
                spanId,
                name: `chat gpt-4o-mini${bad}`,
                kind: 3,
                startTimeUnixNano: '1700000000000000000',
                endTimeUnixNano: '1700000000500000000',
                attributes: [
                  kv('session.id', str(run)),
                  kv('gen_ai.operation.name', str('chat')),
                  kv('gen_ai.request.model', str('gpt-4o-mini')),
                  kv('gen_ai.input.messages', str(JSON.stringify([{ role: 'user', content: `hi${bad}there` }]))),
                  kv(`odd${bad}key`, str(`odd${bad}value`)),
                  kv('list', { arrayValue: { values: [str(`a${bad}`), { intValue: '7' }] } }),
                  kv('map', { kvlistValue: { values: [kv(`k${bad}`, str(`v${bad}`))] } }),
                ],
                events: [
                  {
                    timeUnixNano: '1700000000100000000',
                    name: `event${bad}`,
                    attributes: [kv('e', str(`x${bad}`))],
                  },
                ],
                status: { code: 2, message: `failed${bad}` },
              },
            ],
          },
        ],
      },
    ],
  };
}

function logsRequest(traceId: string, spanId: string, bad: string) {
  return {
    resourceLogs: [
      {
        resource: { attributes: [kv('service.name', str('unusual-text'))] },
        scopeLogs: [
          {
            scope: { name: 'unusual-text' },
            logRecords: [
              {
                traceId,
                spanId,
                timeUnixNano: '1700000000200000000',
                severityText: `INFO${bad}`,
                body: { kvlistValue: { values: [kv('content', str(`body${bad}`))] } },
                attributes: [kv('event.name', str('gen_ai.user.message')), kv(`a${bad}`, str(`b${bad}`))],
              },
            ],
          },
        ],
      },
    ],
  };
}

function protobufOf(kind: 'traces' | 'logs', request: object): Uint8Array {
  const types = otlpTypes();
  const type = kind === 'traces' ? types.ExportTraceServiceRequest : types.ExportLogsServiceRequest;
  // fromObject reads ids as base64 in plain objects: hand it bytes
  const withBytes = JSON.parse(JSON.stringify(request), (key, value) =>
    (key === 'traceId' || key === 'spanId') && typeof value === 'string' ? Buffer.from(value, 'hex') : value,
  );
  return type.encode(type.fromObject(withBytes)).finish();
}

const cases = [
  { what: 'NUL', bad: NUL, encoding: 'json' as const },
  { what: 'NUL', bad: NUL, encoding: 'protobuf' as const },
  { what: 'a lone high surrogate', bad: LONE_HIGH, encoding: 'json' as const },
  { what: 'a lone low surrogate', bad: LONE_LOW, encoding: 'json' as const },
];

describe.each(databaseKinds)('unusual text in spans and logs (%s)', (kind) => {
  let t: TestTapedeck;

  beforeAll(async () => {
    t = await startTestTapedeck(kind, {}, {});
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await t?.close();
  });

  it.each(cases)(
    'stores a span and log record holding $what ($encoding) in full, with U+FFFD in its place',
    async ({ bad, encoding }) => {
      const traceId = randomTraceId();
      const spanId = randomSpanId();
      const run = `unusual-${traceId.slice(0, 8)}`;
      const contentType = encoding === 'json' ? JSON_TYPE : PROTOBUF;
      const body = (k: 'traces' | 'logs', request: object) =>
        encoding === 'json' ? JSON.stringify(request) : protobufOf(k, request);

      const traces = await postOtlp(t, 'traces', body('traces', traceRequest(traceId, spanId, run, bad)), contentType);
      expect(traces.status, traces.body.toString()).toBe(200);
      expect(readExportResponse('traces', traces.body, encoding).rejected).toBe(0);
      const logs = await postOtlp(t, 'logs', body('logs', logsRequest(traceId, spanId, bad)), contentType);
      expect(logs.status, logs.body.toString()).toBe(200);
      expect(readExportResponse('logs', logs.body, encoding).rejected).toBe(0);

      const [row] = await readSpanRows(t.db, [traceId]);
      expect(row.name).toBe(`chat gpt-4o-mini${REPLACED}`);
      expect(row.status_message).toBe(`failed${REPLACED}`);
      expect(row.attributes).toMatchObject({
        'session.id': run,
        [`odd${REPLACED}key`]: `odd${REPLACED}value`,
        list: [`a${REPLACED}`, 7],
        map: { [`k${REPLACED}`]: `v${REPLACED}` },
      });
      expect(row.events).toMatchObject([{ name: `event${REPLACED}`, attributes: { e: `x${REPLACED}` } }]);
      expect(row.resource_attributes).toMatchObject({ [`host${REPLACED}`]: `box${REPLACED}` });
      expect(row.scope_attributes).toEqual({ 'scope.note': `s${REPLACED}` });

      const [log] = await readLogRows(t.db, [traceId]);
      expect(log.body).toEqual({ content: `body${REPLACED}` });
      expect(log.attributes).toMatchObject({ [`a${REPLACED}`]: `b${REPLACED}` });

      // the step derived from it reads, through the tape; its request is JSON text read from an
      // attribute that spelled the character as an escape, and is served exactly as recorded
      const tape = await fetch(`${t.url}/v1/tapes/${run}`);
      expect(tape.status).toBe(200);
      const read = (await tape.json()) as { steps: { kind: string; name: string; request: { content: string }[] }[] };
      expect(read.steps).toHaveLength(1);
      expect(read.steps[0].kind).toBe('llm');
      expect(read.steps[0].request[0].content).toBe(`hi${bad}there`);
    },
  );
});
