/**
 * A stream of uniquely identified GenAI chat spans pushed through real SpanExporters, and
 * the ledger of what each exporter reported for each span: its batch's ExportResultCode.
 * Each sender exports a batch, waits for its result (the exporter retries inside, as it is
 * configured to), and exports the next, as a BatchSpanProcessor does. Afterwards tally()
 * reads what was stored and counts, for the spans the exporters reported as acknowledged,
 * those lost (no span row or no step) and, for every span sent, those stored more than once.
 */
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
  type SpanExporter,
} from '@opentelemetry/sdk-trace-base';

export interface SpanFate {
  traceId: string;
  sender: string;
  acknowledged: boolean;
}

/** Every span sent, by span id. */
export type Ledger = Map<string, SpanFate>;

export interface SpanStreamOptions {
  /** spans per export */
  batchSize: number;
  /** concurrent exports per exporter */
  sendersPerExporter: number;
  /** pause between a sender's exports */
  pauseMs: number;
  /** bytes of prompt text per span (above the payload threshold, the step's request is offloaded) */
  promptBytes?: number;
}

export interface RunningStream {
  ledger: Ledger;
  /** exports answered so far, by exporter name and result */
  answered(): Record<string, { succeeded: number; failed: number }>;
  /** stops starting exports and waits for those in flight to be answered */
  stop(): Promise<void>;
}

/** Finished chat spans, one trace each, whose prompt names the span. */
class ChatSpans {
  private readonly memory = new InMemorySpanExporter();
  private readonly tracer = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(this.memory)],
  }).getTracer('fault-suite');
  private serial = 0;

  constructor(private readonly promptBytes: number) {}

  take(n: number): ReadableSpan[] {
    for (let i = 0; i < n; i++) {
      const serial = this.serial++;
      const prompt = `question ${serial}: `.padEnd(this.promptBytes, 'why is the sky blue at noon and red at dusk? ');
      const span = this.tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT }, ROOT_CONTEXT);
      span.setAttributes({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: prompt }] }]),
        'gen_ai.output.messages': JSON.stringify([
          { role: 'assistant', parts: [{ type: 'text', content: `answer ${serial}` }], finish_reason: 'stop' },
        ]),
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 3,
        'fault_suite.serial': serial,
      });
      span.end();
    }
    const spans = this.memory.getFinishedSpans().slice();
    this.memory.reset();
    return spans;
  }
}

export function startSpanStream(exporters: Record<string, SpanExporter>, options: SpanStreamOptions): RunningStream {
  const ledger: Ledger = new Map();
  const source = new ChatSpans(options.promptBytes ?? 64);
  const counts: Record<string, { succeeded: number; failed: number }> = {};
  let stopping = false;

  const sender = async (name: string, exporter: SpanExporter): Promise<void> => {
    while (!stopping) {
      const batch = source.take(options.batchSize);
      for (const span of batch) {
        ledger.set(span.spanContext().spanId, {
          traceId: span.spanContext().traceId,
          sender: name,
          acknowledged: false,
        });
      }
      const result = await new Promise<ExportResult>((resolve) => exporter.export(batch, resolve));
      const ok = result.code === ExportResultCode.SUCCESS;
      counts[name][ok ? 'succeeded' : 'failed']++;
      if (ok) for (const span of batch) ledger.get(span.spanContext().spanId)!.acknowledged = true;
      await new Promise((r) => setTimeout(r, options.pauseMs));
    }
  };

  const running: Promise<void>[] = [];
  for (const [name, exporter] of Object.entries(exporters)) {
    counts[name] = { succeeded: 0, failed: 0 };
    for (let i = 0; i < options.sendersPerExporter; i++) running.push(sender(name, exporter));
  }
  return {
    ledger,
    answered: () => structuredClone(counts),
    async stop() {
      stopping = true;
      await Promise.all(running);
    },
  };
}

export type Query = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

export interface Tally {
  sent: number;
  acknowledged: number;
  /** acknowledged spans missing their span row or their step */
  lost: number;
  /** acknowledged spans with no row in tapedeck.spans */
  lostSpans: number;
  /** acknowledged spans stored without their step (every span sent is a chat call) */
  lostSteps: number;
  /** spans (acknowledged or not) with more than one row in tapedeck.spans or tapedeck.tape_steps */
  duplicated: number;
  /** spans whose export finally failed that are stored all the same (committed, then the answer was lost) */
  storedUnacknowledged: number;
  bySender: Record<string, { sent: number; acknowledged: number }>;
}

/** Reads what was stored for the ledger's traces and compares. */
export async function tally(ledger: Ledger, query: Query): Promise<Tally> {
  const traceIds = [...new Set([...ledger.values()].map((f) => f.traceId))];
  const countsOf = async (view: string) => {
    const rows = await query(
      `SELECT span_id, count(*)::int AS n FROM ${view} WHERE trace_id = ANY($1::text[]) GROUP BY span_id`,
      [traceIds],
    );
    return new Map(rows.map((r) => [String(r.span_id), Number(r.n)]));
  };
  const spans = await countsOf('tapedeck.spans');
  const steps = await countsOf('tapedeck.tape_steps');
  const t: Tally = {
    sent: ledger.size,
    acknowledged: 0,
    lost: 0,
    lostSpans: 0,
    lostSteps: 0,
    duplicated: 0,
    storedUnacknowledged: 0,
    bySender: {},
  };
  for (const [spanId, fate] of ledger) {
    const by = (t.bySender[fate.sender] ??= { sent: 0, acknowledged: 0 });
    by.sent++;
    const spanRows = spans.get(spanId) ?? 0;
    const stepRows = steps.get(spanId) ?? 0;
    if (spanRows > 1 || stepRows > 1) t.duplicated++;
    if (fate.acknowledged) {
      t.acknowledged++;
      by.acknowledged++;
      if (spanRows === 0) t.lostSpans++;
      if (stepRows === 0) t.lostSteps++;
      if (spanRows === 0 || stepRows === 0) t.lost++;
    } else if (spanRows > 0) {
      t.storedUnacknowledged++;
    }
  }
  // Rows of spans nobody sent would mean ids were mixed up; there are none to count, since
  // the query only reads the ledger's traces, but a trace holding an unknown span is one.
  const unknown = [...spans.keys()].filter((id) => !ledger.has(id)).length;
  if (unknown > 0) throw new Error(`${unknown} stored spans of these traces were never sent`);
  return t;
}

/** One line for the test's output: what was sent and acknowledged, what was lost and duplicated. */
export function describeTally(name: string, t: Tally): string {
  const senders = Object.entries(t.bySender)
    .map(([s, c]) => `${s} ${c.acknowledged}/${c.sent}`)
    .join(', ');
  return (
    `${name}: ${t.sent} spans sent, ${t.acknowledged} acknowledged (${senders}); ` +
    `lost ${t.lost} (${t.lostSpans} without their span row, ${t.lostSteps} without their step), ` +
    `duplicated ${t.duplicated}; ` +
    `${t.storedUnacknowledged} stored though their export failed`
  );
}
