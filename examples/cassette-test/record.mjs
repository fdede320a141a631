// Records weather.cassette.tar, the cassette the example test replays: runs the agent once
// against a scripted stand-in for the model (no real provider, no key), traces each model call
// as an OpenTelemetry GenAI span through tapedeck's in-process SpanExporter into a scratch
// store, then exports the run with `tapedeck cassette export`. Run it after `npm run build`:
//   node examples/cassette-test/record.mjs
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { SpanKind } from '@opentelemetry/api';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import OpenAI from 'openai';
import { TapedeckSpanExporter } from '../../dist/src/index.js';
import { runWeatherAgent } from './agent.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const RUN = 'example-weather';
const answers = [
  { role: 'assistant', content: null, tool_calls: [{ id: 'call_paris_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
  { role: 'assistant', content: "It's 18°C and partly cloudy in Paris right now." },
];

// The stand-in model: answers each chat completion with the next scripted message.
let served = 0;
const model = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    const message = answers[served++];
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({
      id: `chatcmpl-standin-${served}`,
      object: 'chat.completion',
      created: 1764493200,
      model: 'gpt-4o-mini-2024-07-18',
      choices: [{ index: 0, message, finish_reason: message.tool_calls ? 'tool_calls' : 'stop', logprobs: null }],
      usage: { prompt_tokens: 60 + 40 * served, completion_tokens: 12, total_tokens: 72 + 40 * served },
    }));
  });
});
await new Promise((resolve) => model.listen(0, '127.0.0.1', resolve));

// GenAI semantic conventions: messages as role + parts.
const parts = (m) => ({
  role: m.role,
  parts: [
    ...(m.content ? [m.role === 'tool' ? { type: 'tool_call_response', id: m.tool_call_id, response: m.content } : { type: 'text', content: m.content }] : []),
    ...(m.tool_calls ?? []).map((c) => ({ type: 'tool_call', id: c.id, name: c.function.name, arguments: JSON.parse(c.function.arguments) })),
  ],
});

const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-example-record-'));
const provider = new BasicTracerProvider({
  spanProcessors: [new SimpleSpanProcessor(new TapedeckSpanExporter({ config: { dataDir, databaseUrl: undefined } }))],
});
const tracer = provider.getTracer('cassette-example');
const client = new OpenAI({ baseURL: `http://127.0.0.1:${model.address().port}/v1`, apiKey: 'stand-in', maxRetries: 0 });
const answer = await runWeatherAgent(client, {
  onModelCall: (request, response, startMs, endMs) => {
    const choice = response.choices[0];
    const span = tracer.startSpan('chat gpt-4o-mini', {
      kind: SpanKind.CLIENT,
      startTime: startMs,
      attributes: {
        'session.id': RUN,
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'openai',
        'gen_ai.request.model': request.model,
        'gen_ai.response.model': response.model,
        'gen_ai.input.messages': JSON.stringify(request.messages.map(parts)),
        'gen_ai.output.messages': JSON.stringify([{ ...parts(choice.message), finish_reason: choice.finish_reason }]),
        'gen_ai.usage.input_tokens': response.usage.prompt_tokens,
        'gen_ai.usage.output_tokens': response.usage.completion_tokens,
      },
    });
    span.end(endMs);
  },
});
await provider.shutdown();
model.close();
console.log(`recorded: ${answer}`);
execFileSync(process.execPath, [path.join(here, '..', '..', 'dist', 'src', 'cli', 'main.js'), 'cassette', 'export', RUN, '--name', 'weather agent', '-o', path.join(here, 'weather.cassette.tar')], {
  env: { ...process.env, TAPEDECK_DATA_DIR: dataDir, TAPEDECK_DATABASE_URL: '' },
  stdio: 'inherit',
});
rmSync(dataDir, { recursive: true, force: true });
