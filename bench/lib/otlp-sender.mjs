// Concurrent OTLP/HTTP protobuf senders, as BatchSpanProcessor exporters would be: each sends
// one export request, waits for its answer, and sends the next. A request counts when it is
// acknowledged (200); a busy or unavailable answer (429/503) is retried after a short pause,
// as an exporter would, and counted.
import http from 'node:http';

/**
 * Sends until `seconds` have passed and every sender sent at least `minRequests`; resolves
 * with spans and bytes acknowledged, the elapsed seconds (until the last answer) and retries.
 */
export async function sendExports({ url, source, senders, seconds, minRequests = 1 }) {
  const started = performance.now();
  const deadline = started + seconds * 1000;
  return send(url, senders, (sent, body) =>
    sent < minRequests || performance.now() < deadline ? { body: source.next(body), spans: source.spans } : undefined,
  );
}

/**
 * Sends each of `requests` ({ body, spans }) once, the senders taking the next as they finish
 * one; resolves as sendExports.
 */
export async function sendAll({ url, requests, senders }) {
  let next = 0;
  return send(url, senders, () => requests[next++]);
}

/** `nextRequest(sent, previousBody)` gives a sender its next { body, spans }, or undefined once it is done. */
async function send(url, senders, nextRequest) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: senders });
  const target = new URL(url);
  const started = performance.now();
  let spans = 0;
  let bytes = 0;
  let retries = 0;
  const sender = async () => {
    let body;
    for (let sent = 0; ; sent++) {
      const request = nextRequest(sent, body);
      if (request === undefined) break;
      body = request.body;
      for (;;) {
        const { status } = await postExport(agent, target, body);
        if (status === 200) break;
        if (status !== 429 && status !== 503) throw new Error(`tapedeck answered ${status}`);
        retries++;
        await new Promise((r) => setTimeout(r, 100));
      }
      spans += request.spans;
      bytes += body.length;
    }
  };
  await Promise.all(Array.from({ length: senders }, sender));
  agent.destroy();
  return { spans, bytes, retries, elapsed: (performance.now() - started) / 1000 };
}

/**
 * POSTs one protobuf export request; resolves with the status and Retry-After header once the
 * answer has been read. With `timeoutMs`, a request unanswered by then fails.
 */
export function postExport(agent, target, body, timeoutMs) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/x-protobuf', 'content-length': body.length },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode, retryAfter: res.headers['retry-after'] }));
        res.on('error', reject);
      },
    );
    if (timeoutMs) req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
    // A server may answer (429, say) before it has read a large body and close the
    // connection: the rest of the write then fails on a socket the request has let go of.
    req.on('socket', (socket) => {
      if (socket.benchTolerant) return;
      socket.benchTolerant = true;
      socket.on('error', () => {});
    });
    req.end(body);
  });
}
