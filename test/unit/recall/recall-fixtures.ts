/**
 * Test helper for recall: a fresh store of a given kind loaded, through the ingest core, with
 * runs recorded as OTel GenAI spans (gen_ai.input.messages / gen_ai.output.messages JSON
 * strings, execute_tool spans), and the recall route over it.
 */
import { loadConfig } from '../../../src/config.js';
import { ingestSpans } from '../../../src/ingest/ingest.js';
import { silentLogger } from '../../../src/logger.js';
import { createMemoryPayloadStore } from '../../../src/payloads/memory-payload-store.js';
import { parsePricingTable } from '../../../src/pricing/pricing-table.js';
import { appWith } from '../../helpers/app.js';
import { createRecallRoutes, type RecallRouteSettings } from '../../../src/recall/routes.js';
import type { Attributes, SpanRecord } from '../../../src/spans/span-record.js';
import { openStore, type Store } from '../../../src/open-store.js';
import { createTestDatabase, type DatabaseKind } from '../../helpers/databases.js';
import { span } from '../../helpers/span-builder.js';

const MS = 1_000_000n;
export const T0_MS = 1_796_000_000_000;
/** "now" for the route: ten days after the recorded runs */
export const NOW_NS = BigInt(T0_MS) * MS + 10n * 86_400_000n * MS;
/** a start (ms after T0) that makes a run end 1 minute before NOW: still active */
export const ACTIVE_START = 10 * 86_400_000 - 61_000;
export const PAYLOAD_THRESHOLD = 2048;

export const pricing = parsePricingTable(JSON.stringify({ models: { 'gpt-4o': { input: 2.5, output: 10 } } }));

export interface RunSpec {
  run: string;
  /** ms after T0 */
  start: number;
  steps: StepSpec[];
  /** the root (agent) span's status */
  status?: 'ok' | 'error';
}

export type StepSpec =
  | {
      llm: string;
      answer?: string;
      call?: { name: string; arguments: Record<string, unknown> };
      status?: 'ok' | 'error';
      tools?: unknown;
    }
  | { tool: string; args: unknown; result?: unknown; status?: 'ok' | 'error' };

let traceCounter = 0;

export function spansOf(spec: RunSpec): SpanRecord[] {
  const traceId = (++traceCounter).toString(16).padStart(32, 'a');
  const rootEnd = spec.start + spec.steps.length * 100 + 10;
  const spans: SpanRecord[] = [
    span({
      name: 'invoke_agent planner',
      id: 'root',
      traceId,
      start: spec.start,
      end: rootEnd,
      status: spec.status ?? 'ok',
      attributes: { 'session.id': spec.run, 'gen_ai.operation.name': 'invoke_agent', 'gen_ai.agent.name': 'planner' },
    }),
  ];
  spec.steps.forEach((s, i) => {
    const start = spec.start + 5 + i * 100;
    const common = { id: `s${i}`, parent: 'root', traceId, start, end: start + 50, status: s.status ?? 'ok' } as const;
    if ('llm' in s) {
      const output = s.call
        ? [
            {
              role: 'assistant',
              parts: [{ type: 'tool_call', id: `call${i}`, name: s.call.name, arguments: s.call.arguments }],
              finish_reason: 'tool_call',
            },
          ]
        : [{ role: 'assistant', parts: [{ type: 'text', content: s.answer ?? 'ok' }], finish_reason: 'stop' }];
      const attributes: Attributes = {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.usage.input_tokens': 100,
        'gen_ai.usage.output_tokens': 20,
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: s.llm }] }]),
        'gen_ai.output.messages': JSON.stringify(output),
      };
      if (s.tools !== undefined) {
        attributes['gen_ai.tool.definitions'] = JSON.stringify(s.tools);
        attributes['gen_ai.request.tools'] = JSON.stringify(s.tools);
      }
      spans.push(span({ ...common, name: 'chat gpt-4o', kind: 'client', attributes }));
    } else {
      spans.push(
        span({
          ...common,
          name: `execute_tool ${s.tool}`,
          attributes: {
            'gen_ai.operation.name': 'execute_tool',
            'gen_ai.tool.name': s.tool,
            'gen_ai.tool.call.arguments': JSON.stringify(s.args),
            ...(s.result !== undefined ? { 'gen_ai.tool.call.result': JSON.stringify(s.result) } : {}),
          },
        }),
      );
    }
  });
  return spans;
}

export interface RecallFixture {
  store: Store;
  get(query: string, settings?: Partial<RecallRouteSettings>): Promise<{ status: number; body: any }>;
  drop(): Promise<void>;
}

export async function openRecallFixture(kind: DatabaseKind, runs: readonly RunSpec[]): Promise<RecallFixture> {
  const test = await createTestDatabase(kind, { migrated: false });
  const config = { ...loadConfig({}), payloadThresholdBytes: PAYLOAD_THRESHOLD };
  const store = await openStore(config, silentLogger(), { db: test.db, payloads: createMemoryPayloadStore() });
  for (const run of runs) await ingestSpans(spansOf(run), { tenant: '' }, store.ingest);
  return {
    store,
    async get(query, settings = {}) {
      const app = appWith(
        createRecallRoutes(
          { db: store.db, payloads: store.payloads, pricing },
          { queryDeadlineMs: 10_000, nowNs: () => NOW_NS, ...settings },
        ),
      );
      const res = await app.request(`/v1/recall${query}`);
      return { status: res.status, body: JSON.parse(await res.text()) };
    },
    drop: () => test.drop(),
  };
}

const longChinese = `${'这是一段很长的历史记录，'.repeat(300)}请查询上海天气预报。`;

/** The runs both recall integration files load. */
export const recallRuns: RunSpec[] = [
  {
    run: 'weather-ok',
    start: 1_000,
    steps: [
      { llm: "What's the weather in Paris?", call: { name: 'get_weather', arguments: { city: 'Paris' } } },
      { tool: 'get_weather', args: { city: 'Paris' }, result: { forecast: 'drizzle', celsius: 12 } },
      { tool: 'search', args: { q: 'umbrella shops' } },
      { tool: 'search', args: { q: 'umbrella prices' } },
      { tool: 'search', args: { q: 'umbrella reviews' } },
      { llm: 'Summarize the weather for Paris', answer: 'Expect drizzle in Paris; take an umbrella.' },
    ],
  },
  {
    run: 'weather-failed',
    start: 50_000,
    status: 'error',
    steps: [
      { llm: 'weather Paris, attempt one' },
      { llm: 'weather Paris, attempt two' },
      { llm: 'weather Paris, attempt three' },
      { llm: 'weather Paris, attempt four' },
      { tool: 'get_weather', args: { city: 'Paris' }, status: 'error' },
    ],
  },
  {
    run: 'schema-only',
    start: 90_000,
    steps: [
      {
        llm: 'Plan a picnic',
        answer: 'Sunny.',
        tools: [
          { name: 'read_barometer', description: 'reads the barometer pressure', parameters: { type: 'object' } },
        ],
      },
    ],
  },
  { run: 'chinese', start: 100_000, steps: [{ llm: '请告诉我明天北京天气预报怎么样', answer: '明天北京有小雨。' }] },
  { run: 'chinese-offloaded', start: 110_000, steps: [{ tool: 'history', args: { text: longChinese } }] },
  { run: 'chinese-apart', start: 120_000, steps: [{ llm: '上海天，天气预报' }] },
  {
    run: 'arabic',
    start: 130_000,
    steps: [{ tool: 'web_search', args: { query: 'ما هو الطقس في القاهرة غدًا' }, result: 'الجو مشمس' }],
  },
  { run: 'active', start: ACTIVE_START, steps: [{ llm: 'zeppelin weather Paris' }] },
];

/** Run ids in the order recall answered them. */
export const runIds = (body: { runs: { run: string }[] }) => body.runs.map((r) => r.run);
