// An application that exports its spans in-process through TapedeckSpanExporter (the built
// package, dist/), for a test to kill with SIGKILL. It sends batches of uniquely identified
// chat spans, one export at a time per sender, and writes to stdout, before each export,
// `sent <spanId>:<traceId>,...` and, once the exporter reports SUCCESS, `ack <spanId>,...`:
// stdout is a pipe, written synchronously, so a line printed is the parent's even if the
// process is killed right after. SIGTERM stops the senders and shuts the exporter down.
// Settings: FAULTS_DATABASE_URL (else embedded PGlite), FAULTS_DATA_DIR, FAULTS_SERIAL_BASE.
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { TapedeckSpanExporter } from '../../../dist/src/index.js';

const exporter = new TapedeckSpanExporter({
  config: { databaseUrl: process.env.FAULTS_DATABASE_URL || null, dataDir: process.env.FAULTS_DATA_DIR },
});
const memory = new InMemorySpanExporter();
const tracer = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(memory)] }).getTracer('faults');
let serial = Number(process.env.FAULTS_SERIAL_BASE ?? 0);
let stopping = false;

function batch(n) {
  for (let i = 0; i < n; i++) {
    const s = serial++;
    const span = tracer.startSpan('chat gpt-4o-mini', { kind: SpanKind.CLIENT }, ROOT_CONTEXT);
    span.setAttributes({
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'openai',
      'gen_ai.request.model': 'gpt-4o-mini',
      'gen_ai.input.messages': JSON.stringify([{ role: 'user', parts: [{ type: 'text', content: `question ${s}` }] }]),
      'gen_ai.output.messages': JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: `answer ${s}` }], finish_reason: 'stop' },
      ]),
      'fault_suite.serial': s,
    });
    span.end();
  }
  const spans = memory.getFinishedSpans().slice();
  memory.reset();
  return spans;
}

async function sender() {
  while (!stopping) {
    const spans = batch(10);
    const ids = spans.map((s) => s.spanContext());
    process.stdout.write(`sent ${ids.map((c) => `${c.spanId}:${c.traceId}`).join(',')}\n`);
    const result = await new Promise((resolve) => exporter.export(spans, resolve));
    if (result.code === ExportResultCode.SUCCESS) process.stdout.write(`ack ${ids.map((c) => c.spanId).join(',')}\n`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

process.once('SIGTERM', () => {
  stopping = true;
});
await Promise.all([sender(), sender()]);
await exporter.shutdown();
process.stdout.write('stopped\n');
