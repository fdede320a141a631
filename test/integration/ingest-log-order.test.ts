/**
 * Log records of one instant sent in requests of their own are read in the order their
 * requests arrived.
 *
 * Scope: the OTel GenAI event layout as an SDK exporting each record as it is emitted sends
 * it (the JavaScript instrumentation stamps a call's input messages with one millisecond):
 * the system message's request arrives first, but its body follows only once the user
 * message's request has been stored and answered. The model call's step must still list the
 * system message first, on each database kind.
 */
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JsonValue } from '../../src/json/json-value.js';
import { comparableForm } from '../../src/normalize/comparable.js';
import { databaseKinds } from '../helpers/databases.js';
import {
  JSON_TYPE,
  postOtlp,
  randomSpanId,
  randomTraceId,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
  traceBody,
} from '../helpers/tapedeck-server.js';
import { readTape } from '../helpers/weather-conversation.js';

/**
 * POSTs an OTLP/JSON body in two steps: the headers (asking `Expect: 100-continue`), then,
 * once `sendBody` is called, the body. `arrival` resolves when the server has taken the
 * request (it answered 100 Continue, which Node sends as it hands the request on).
 */
function postInTwoSteps(url: string, body: string) {
  let sendBody = (): void => {};
  let arrived = (): void => {};
  const arrival = new Promise<void>((resolve) => {
    arrived = resolve;
  });
  const answer = new Promise<number>((resolve, reject) => {
    const bytes = Buffer.from(body);
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': JSON_TYPE, 'content-length': String(bytes.length), expect: '100-continue' },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.on('continue', arrived);
    sendBody = () => req.end(bytes);
  });
  return { arrival, sendBody: () => sendBody(), answer };
}

const AT_NS = 1_796_032_245_039_000_000n;
const resource = { attributes: [{ key: 'service.name', value: { stringValue: 'weather-agent' } }] };
const scope = { name: '@opentelemetry/instrumentation-openai', version: '0.21.0' };
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

/** One OTel GenAI message event, alone in its request, as a SimpleLogRecordProcessor sends it. */
function messageEvent(traceId: string, spanId: string, event: string, content: string): string {
  const record = {
    timeUnixNano: String(AT_NS),
    observedTimeUnixNano: String(AT_NS),
    severityNumber: 9,
    traceId,
    spanId,
    body: { kvlistValue: { values: [{ key: 'content', value: { stringValue: content } }] } },
    attributes: [attr('event.name', event), attr('gen_ai.system', 'openai')],
  };
  return JSON.stringify({ resourceLogs: [{ resource, scopeLogs: [{ scope, logRecords: [record] }] }] });
}

describe.each(databaseKinds)('log records of one instant in requests of their own (%s)', (kind) => {
  let t: TestTapedeck;
  beforeAll(async () => {
    t = await startTestTapedeck(kind);
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await t?.close();
  });

  it('are read in the order their requests arrived, not the order they were stored in', async () => {
    const traceId = randomTraceId();
    const spanId = randomSpanId();
    const run = `log-order-${traceId.slice(0, 8)}`;
    const system = 'You are a concise weather assistant.';
    const question = 'What is the weather in Lyon right now?';

    const first = postInTwoSteps(`${t.url}/v1/logs`, messageEvent(traceId, spanId, 'gen_ai.system.message', system));
    await first.arrival;
    const second = await postOtlp(t, 'logs', messageEvent(traceId, spanId, 'gen_ai.user.message', question), JSON_TYPE);
    expect(second.status).toBe(200);
    first.sendBody();
    expect(await first.answer).toBe(200);
    const chat = {
      traceId,
      spanId,
      name: 'chat gpt-4o-mini',
      attributes: {
        'session.id': run,
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
      },
    };
    expect((await postOtlp(t, 'traces', traceBody([chat], 'json'), JSON_TYPE)).status).toBe(200);

    const tape = await readTape(t, run);
    expect(tape.steps).toHaveLength(1);
    expect(comparableForm(tape.steps[0].request as JsonValue)).toEqual([
      { role: 'system', content: system },
      { role: 'user', content: question },
    ]);
  });
});
