/**
 * Span content shaped like a payload reference ({"$payload": "sha256/<hex>"}) is stored and
 * reads back as the text it was, on every read path that resolves references: the tape API
 * with resolve=true, replay answers, the chat dataset, MCP and cassette export. The content
 * names a payload that really is in the store (another run's offloaded answer), so a reader
 * that followed it would show that run's text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readArchiveBytes } from '../../src/cassettes/archive.js';
import { defaultCassetteLimits } from '../../src/cassettes/format.js';
import { checkCassette } from '../../src/cassettes/load.js';
import { ingestSpans } from '../../src/ingest/ingest.js';
import { databaseKinds } from '../helpers/databases.js';
import { span } from '../helpers/span-builder.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';

const SECRET = 'The vault combination is 31-7-42. ';
const QUESTION = 'What does this say?';

function chat(id: string, trace: string, run: string, input: unknown[], output: unknown[]) {
  return span({
    id,
    traceId: trace,
    parent: null,
    start: 1,
    end: 2,
    name: 'chat gpt-4o',
    attributes: {
      'session.id': run,
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'gpt-4o',
      'gen_ai.input.messages': JSON.stringify(input),
      'gen_ai.output.messages': JSON.stringify(output),
    },
  });
}

describe.each(databaseKinds)('content shaped like a payload reference on %s', (kind) => {
  let t: TestTapedeck;
  let named: { $payload: string };

  beforeAll(async () => {
    t = await startTestTapedeck(kind, { payloadThresholdBytes: 1024, mcp: true });
    const ingest = t.running.store.ingest;
    // another run's answer, over the threshold: offloaded to the payload store
    const secretAnswer = [{ role: 'assistant', content: SECRET.repeat(64), finish_reason: 'stop' }];
    await ingestSpans(
      [chat('s1', 'a'.repeat(32), 'vault', [{ role: 'user', content: 'Open it.' }], secretAnswer)],
      { tenant: '' },
      ingest,
    );
    const [row] = await t.db.query<{ ref: string }>(
      'SELECT tapedeck_store.payload_ref_of(response) AS ref FROM tapedeck_store.steps WHERE response IS NOT NULL',
    );
    expect(row.ref).toMatch(/^sha256\/[0-9a-f]{64}$/);
    named = { $payload: row.ref };
    await ingestSpans(
      [
        chat(
          'p1',
          'b'.repeat(32),
          'probe',
          [
            { role: 'user', content: QUESTION },
            { role: 'user', content: named },
          ],
          [{ role: 'assistant', content: named, finish_reason: 'stop' }],
        ),
      ],
      { tenant: '' },
      ingest,
    );
  });
  afterAll(async () => t?.close());

  const get = async (path: string) => {
    const res = await fetch(`${t.url}${path}`);
    return { status: res.status, text: await res.text() };
  };

  it('reads back literally through the tape API with resolve=true', async () => {
    const { status, text } = await get('/v1/tapes/probe?resolve=true');
    expect(status).toBe(200);
    expect(text).not.toContain(SECRET);
    const tape = JSON.parse(text) as { resolved_partial: boolean; steps: { request: unknown; response: unknown }[] };
    expect(tape.steps[0].request).toEqual([
      { role: 'user', content: QUESTION },
      { role: 'user', content: named },
    ]);
    expect(tape.steps[0].response).toEqual([{ role: 'assistant', content: named, finish_reason: 'stop' }]);
    expect(tape.resolved_partial).toBe(false);
    // the run that did offload it still resolves
    expect((await get('/v1/tapes/vault?resolve=true')).text).toContain(SECRET);
  });

  it("is what a replay answers, and the replay holds no other run's payload", async () => {
    const created = await fetch(`${t.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run: 'probe', mode: 'loose' }),
    });
    expect(created.status).toBe(201);
    const { base_urls } = (await created.json()) as { base_urls: { openai: string } };
    const res = await fetch(`${t.url}${base_urls.openai}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: QUESTION }] }),
    });
    const text = await res.text();
    expect([res.status, text.includes(SECRET)]).toEqual([200, false]);
    const answer = JSON.parse(text) as { choices: { message: { content: string } }[] };
    expect(JSON.parse(answer.choices[0].message.content)).toEqual(named);
  });

  it('is what the chat dataset writes', async () => {
    const { status, text } = await get('/v1/datasets/chat.jsonl?outcome=any');
    expect(status).toBe(200);
    const lines = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { messages: { role: string; content: unknown }[] });
    expect(lines).toHaveLength(2);
    const probe = lines.find((l) => l.messages.some((m) => m.content === QUESTION));
    expect(probe?.messages.at(-1)).toMatchObject({ role: 'assistant', content: JSON.stringify(named) });
    expect(JSON.stringify(probe)).not.toContain(SECRET);
  });

  it('is what MCP shows, and a cassette of the run carries no payload', async () => {
    const mcp = await fetch(`${t.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'get_run_tape', arguments: { run: 'probe', preview_chars: 4000 } },
      }),
    });
    const shown = await mcp.text();
    expect([mcp.status, shown.includes(named.$payload), shown.includes(SECRET)]).toEqual([200, true, false]);
    expect(shown).not.toContain('offloaded');

    const res = await fetch(`${t.url}/v1/runs/probe/cassette`);
    expect(res.status).toBe(200);
    const archive = await readArchiveBytes(Buffer.from(await res.arrayBuffer()), { limits: defaultCassetteLimits });
    const cassette = checkCassette(archive, defaultCassetteLimits);
    expect([...cassette.blobs.keys()]).toEqual([]);
    expect(cassette.runs[0].steps[0].response).toEqual([{ role: 'assistant', content: named, finish_reason: 'stop' }]);
  });
});
