/**
 * A scripted stand-in for a model provider, on a loopback port: it answers OpenAI chat
 * completions (POST /v1/chat/completions) and Anthropic messages (POST /v1/messages), plain
 * or streamed, the way the official SDKs expect. Its script is a weather agent's: a request
 * whose last message is the user's asks for the get_weather tool for the city named in it;
 * one whose last message is a tool result answers with that result in a sentence. It keeps
 * every request it received (path, headers, body), and counts connections, so a test can
 * say what reached it and what did not (GET /_stand-in/requests answers the count).
 *
 *   node examples/replay/stand-in-model.mjs   prints "listening <port>" and serves until killed
 */
import http from 'node:http';

const CITIES = ['Paris', 'Lyon', 'Berlin', 'Tokyo', 'Lisbon'];

function cityIn(text) {
  return CITIES.find((c) => String(text).includes(c)) ?? 'Paris';
}

function textOf(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? p.content ?? JSON.stringify(p.input ?? '')).join(' ');
  return '';
}

/** What the script says next: a tool call for the city asked about, or the answer from the tool result. */
export function scriptedTurn(messages) {
  const last = messages[messages.length - 1] ?? {};
  const toolResult =
    last.role === 'tool'
      ? textOf(last.content)
      : Array.isArray(last.content) && last.content.find((b) => b.type === 'tool_result')
        ? textOf(last.content.find((b) => b.type === 'tool_result').content)
        : null;
  if (toolResult !== null) {
    let result = {};
    try {
      result = JSON.parse(toolResult);
    } catch {}
    return { text: `In ${result.city ?? 'the city'} it is ${result.celsius ?? '?'} °C and ${result.sky ?? 'clear'}.` };
  }
  return { toolCall: { name: 'get_weather', arguments: { city: cityIn(textOf(last.content)) } } };
}

let counter = 0;

function openAiAnswer(body) {
  const turn = scriptedTurn(body.messages ?? []);
  const id = `chatcmpl-standin${++counter}`;
  const message = { role: 'assistant', content: turn.text ?? null, refusal: null };
  if (turn.toolCall) {
    message.tool_calls = [
      {
        id: `call_standin${counter}`,
        type: 'function',
        function: { name: turn.toolCall.name, arguments: JSON.stringify(turn.toolCall.arguments) },
      },
    ];
  }
  const finish = turn.toolCall ? 'tool_calls' : 'stop';
  const usage = { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 };
  const base = { id, created: 1_790_000_000, model: 'stand-in-1', system_fingerprint: null };
  if (!body.stream) {
    return {
      json: { ...base, object: 'chat.completion', choices: [{ index: 0, message, logprobs: null, finish_reason: finish }], usage },
    };
  }
  const chunk = (delta, finishReason = null) => ({
    ...base,
    object: 'chat.completion.chunk',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
  });
  const events = [chunk({ role: 'assistant', content: '' })];
  if (turn.text) for (const piece of turn.text.match(/.{1,12}/g)) events.push(chunk({ content: piece }));
  if (turn.toolCall) {
    const call = message.tool_calls[0];
    events.push(chunk({ tool_calls: [{ index: 0, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }));
    events.push(chunk({ tool_calls: [{ index: 0, function: { arguments: call.function.arguments } }] }));
  }
  events.push(chunk({}, finish));
  if (body.stream_options?.include_usage) events.push({ ...base, object: 'chat.completion.chunk', choices: [], usage });
  return { sse: [...events.map((e) => `data: ${JSON.stringify(e)}\n\n`), 'data: [DONE]\n\n'] };
}

function anthropicAnswer(body) {
  const messages = [...(body.messages ?? [])];
  const turn = scriptedTurn(messages);
  const id = `msg_standin${++counter}`;
  const content = turn.toolCall
    ? [{ type: 'tool_use', id: `toolu_standin${counter}`, name: turn.toolCall.name, input: turn.toolCall.arguments }]
    : [{ type: 'text', text: turn.text }];
  const stop = turn.toolCall ? 'tool_use' : 'end_turn';
  const usage = { input_tokens: 40, output_tokens: 12 };
  const message = { id, type: 'message', role: 'assistant', model: 'stand-in-1', content, stop_reason: stop, stop_sequence: null, usage };
  if (!body.stream) return { json: message };
  const ev = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const out = [ev('message_start', { message: { ...message, content: [], stop_reason: null, usage: { input_tokens: 40, output_tokens: 1 } } })];
  const block = content[0];
  if (block.type === 'text') {
    out.push(ev('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    for (const piece of block.text.match(/.{1,12}/g)) out.push(ev('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }));
  } else {
    out.push(ev('content_block_start', { index: 0, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } }));
    out.push(ev('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }));
  }
  out.push(ev('content_block_stop', { index: 0 }));
  out.push(ev('message_delta', { delta: { stop_reason: stop, stop_sequence: null }, usage: { output_tokens: 12 } }));
  out.push(ev('message_stop', {}));
  return { sse: out };
}

/** Starts the stand-in on a free loopback port (or `port`). */
export async function startStandInModel(port = 0) {
  const requests = [];
  let connections = 0;
  const server = http.createServer((req, res) => {
    let raw = '';
    req.setEncoding('utf8');
    req.on('data', (d) => {
      raw += d;
    });
    req.on('end', () => {
      let body = {};
      try {
        body = JSON.parse(raw || '{}');
      } catch {}
      if (req.method === 'GET' && req.url === '/_stand-in/requests') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ requests: requests.length }));
        return;
      }
      requests.push({ method: req.method, path: req.url, headers: req.headers, raw, body });
      const answer =
        req.method === 'POST' && req.url === '/v1/chat/completions'
          ? openAiAnswer(body)
          : req.method === 'POST' && req.url === '/v1/messages'
            ? anthropicAnswer(body)
            : null;
      if (!answer) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no such route ${req.method} ${req.url}` } }));
        return;
      }
      if (answer.json) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify(answer.json));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      for (const event of answer.sse) res.write(event);
      res.end();
    });
  });
  server.on('connection', () => {
    connections++;
  });
  await new Promise((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.address();
  return {
    port: address.port,
    url: `http://127.0.0.1:${address.port}`,
    requests,
    get connections() {
      return connections;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const standIn = await startStandInModel(Number(process.argv[2] ?? 0));
  process.stdout.write(`listening ${standIn.port}\n`);
  process.on('SIGTERM', () => standIn.close().then(() => process.exit(0)));
}
