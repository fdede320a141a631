/**
 * Test helper: a run of two OTel GenAI model calls (the first naming its end user, its answer
 * long enough to be offloaded under a small payload threshold), with one log record, as the
 * OTLP/JSON bodies an exporter would send, at a chosen time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { createFsPayloadStore } from '../../src/payloads/fs-payload-store.js';
import type { PayloadStore } from '../../src/payloads/payload-store.js';
import type { DatabaseKind } from './databases.js';
import {
  JSON_TYPE,
  postOtlp,
  randomSpanId,
  randomTraceId,
  START_TIMEOUT_MS,
  startTestTapedeck,
  type TestTapedeck,
} from './tapedeck-server.js';

export interface GenAiRun {
  run: string;
  traceId: string;
  spanIds: string[];
  /** OTLP/JSON ExportTraceServiceRequest */
  traces: string;
  /** OTLP/JSON ExportLogsServiceRequest */
  logs: string;
}

export interface GenAiRunInit {
  run: string;
  question: string;
  /** the first call's answer (the second's prompt repeats it) */
  answer: string;
  user: string;
  /** when the second call ended, Unix nanoseconds (the first ends 1 ms before) */
  endNs?: bigint;
}

const text = (role: string, content: string, extra = {}) => ({ role, parts: [{ type: 'text', content }], ...extra });
const attr = (key: string, value: string) => ({ key, value: { stringValue: value } });

export function genAiRun(init: GenAiRunInit): GenAiRun {
  const traceId = randomTraceId();
  const spanIds = [randomSpanId(), randomSpanId()];
  const end = init.endNs ?? 1_700_000_000_000_000_000n;
  const calls = [
    { prompt: [text('user', init.question)], answer: init.answer, user: true },
    {
      prompt: [text('user', init.question), text('assistant', init.answer), text('user', 'And tomorrow?')],
      answer: `Tomorrow stays dry for ${init.run}.`,
      user: false,
    },
  ];
  const spans = calls.map((call, i) => ({
    traceId,
    spanId: spanIds[i],
    name: 'chat gpt-4o',
    kind: 3,
    startTimeUnixNano: String(end - BigInt(2 - i) * 1_000_000n),
    endTimeUnixNano: String(end - BigInt(1 - i) * 1_000_000n),
    attributes: [
      attr('session.id', init.run),
      attr('gen_ai.operation.name', 'chat'),
      attr('gen_ai.request.model', 'gpt-4o'),
      attr('gen_ai.input.messages', JSON.stringify(call.prompt)),
      attr('gen_ai.output.messages', JSON.stringify([text('assistant', call.answer, { finish_reason: 'stop' })])),
      ...(call.user ? [attr('user.id', init.user)] : []),
    ],
  }));
  const resource = { attributes: [attr('service.name', 'genai-test')] };
  const scope = { name: 'genai-test', version: '1' };
  const traces = JSON.stringify({ resourceSpans: [{ resource, scopeSpans: [{ scope, spans }] }] });
  const logRecord = {
    timeUnixNano: String(end - 2_000_000n),
    traceId,
    spanId: spanIds[0],
    eventName: 'gen_ai.user.message',
    body: { stringValue: `${init.question} (as logged)` },
  };
  const logs = JSON.stringify({ resourceLogs: [{ resource, scopeLogs: [{ scope, logRecords: [logRecord] }] }] });
  return { run: init.run, traceId, spanIds, traces, logs };
}

/** Sends the run's spans and log record over OTLP/HTTP, expecting both accepted. */
export async function sendGenAiRun(t: Pick<TestTapedeck, 'url'>, r: GenAiRun): Promise<void> {
  expect((await postOtlp(t, 'traces', r.traces, JSON_TYPE)).status).toBe(200);
  expect((await postOtlp(t, 'logs', r.logs, JSON_TYPE)).status).toBe(200);
}

/** The payload references a run's steps hold, as stored. */
export async function payloadRefsOf(t: Pick<TestTapedeck, 'db'>, run: string): Promise<Set<string>> {
  const rows = await t.db.query<{ request: string | null; response: string | null }>(
    `SELECT st.request, st.response FROM tapedeck_store.steps st
       JOIN tapedeck_store.spans s USING (tenant, trace_id, span_id) WHERE s.run_id = $1`,
    [run],
  );
  const refs = new Set<string>();
  for (const r of rows)
    for (const m of `${r.request}${r.response}`.matchAll(/"\$payload":"(sha256\/[0-9a-f]{64})"/g)) refs.add(m[1]);
  return refs;
}

/** Where the filesystem payload store under `dir` keeps a payload. */
export function payloadFile(dir: string, ref: string): string {
  const hex = ref.slice('sha256/'.length);
  return path.join(dir, 'sha256', hex.slice(0, 2), hex.slice(2, 4), hex);
}

export interface PayloadDirTapedeck {
  t: TestTapedeck;
  payloadDir: string;
  payloads: PayloadStore;
}

/**
 * For the describe block calling it: a tapedeck whose payloads over 256 bytes go to a
 * directory of its own (so a test can see them come and go), started before its tests and
 * closed, directory removed, after them.
 */
export function usePayloadDirTapedeck(kind: DatabaseKind): PayloadDirTapedeck {
  const running = {} as PayloadDirTapedeck;
  beforeAll(async () => {
    running.payloadDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-payloads-'));
    running.payloads = createFsPayloadStore({ dir: running.payloadDir });
    running.t = await startTestTapedeck(kind, { payloadThresholdBytes: 256 }, { payloads: running.payloads });
  }, START_TIMEOUT_MS);
  afterAll(async () => {
    await running.t?.close();
    if (running.payloadDir) rmSync(running.payloadDir, { recursive: true, force: true });
  });
  return running;
}

/**
 * Sends 12 runs ending now, one after another, and after every fourth a late run made by
 * `late(i)`, as traffic arriving while something else (retention) works; resolves with what
 * it sent of each.
 */
export async function sendNowAndLate(
  t: Pick<TestTapedeck, 'url'>,
  late: (i: number) => GenAiRun,
): Promise<{ now: GenAiRun[]; late: GenAiRun[] }> {
  const sent = { now: [] as GenAiRun[], late: [] as GenAiRun[] };
  for (let i = 0; i < 12; i++) {
    const endNs = BigInt(Date.now()) * 1_000_000n;
    const fresh = genAiRun({ run: `now-${i}`, question: `Rain at ${i}?`, answer: `Dry at ${i}.`, user: 'u', endNs });
    await sendGenAiRun(t, fresh);
    sent.now.push(fresh);
    if (i % 4 === 0) {
      const run = late(i);
      await sendGenAiRun(t, run);
      sent.late.push(run);
    }
  }
  return sent;
}
