/**
 * The worker side of derive-thread.ts on its own: chunks come back in order and equal to what
 * the main thread derives (which lets I/O run between its chunks, and reads new messages'
 * words); a worker that dies fails the transactions waiting on it as unavailable (so senders
 * retry), and the next transaction starts a new one.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { describe, expect, it, vi } from 'vitest';
import { IngestError } from '../../../src/errors.js';
import {
  CHUNK_SPANS,
  IN_FLIGHT,
  createChunkedDerive,
  type ChunkedDerive,
  type DerivedChunk,
} from '../../../src/derive/derive-thread.js';
import type { SpanRecord } from '../../../src/spans/span-record.js';
import { span } from '../../helpers/span-builder.js';
import { conversationSpans } from '../../helpers/conversation-spans.js';
import type { DeriveWorkerMessage } from '../../../src/derive/derive-worker.js';
import { messageWords } from '../../../src/recall/recorded-text.js';

const THRESHOLD = 256 * 1024;

function chatSpans(count: number): SpanRecord[] {
  return Array.from({ length: count }, (_, i) =>
    span({
      name: 'chat gpt-4o',
      id: `chat-${i}`,
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'gpt-4o',
        'gen_ai.input.messages': JSON.stringify([
          { role: 'user', parts: [{ type: 'text', content: `question number ${i}` }] },
        ]),
      },
    }),
  );
}

/** Every chunk of a transaction of new spans; `onTake` is told as each is taken. */
async function all(chunked: ChunkedDerive, spans: SpanRecord[], onTake?: () => void): Promise<DerivedChunk[]> {
  const out: DerivedChunk[] = [];
  for await (const chunk of chunked.chunks(
    '',
    spans,
    () => true,
    () => [],
  )) {
    onTake?.();
    out.push(chunk);
  }
  return out;
}

// the steps' bytes: the worker sends a chunk's in one piece, this thread in the writer's
const comparable = (chunks: DerivedChunk[]) =>
  chunks.map((c) => ({ steps: [...Buffer.concat(c.steps)], local: c.local, spans: c.spans.length }));

const messagesOf = (chunks: DerivedChunk[]) =>
  chunks.map((c) => c.messages.map((m) => [Buffer.from(m.digest).toString('hex'), Buffer.from(m.body).toString()]));

/** The built ChunkDeriver, for stand-in workers that derive as the real one does. */
const CHUNK_MODULE = JSON.stringify(new URL('../../../dist/src/derive/derive-chunk.js', import.meta.url).href);

/**
 * A stand-in worker script in a directory of its own. `source` gets the JSON of a file the
 * script may note its starts in (`starts()` reads it back).
 */
function standInWorker(name: string, source: (marker: string) => string): { script: string; starts: () => string } {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-worker-'));
  const marker = path.join(dir, 'started');
  const script = path.join(dir, name);
  writeFileSync(script, source(JSON.stringify(marker)));
  return { script, starts: () => readFileSync(marker, 'utf8') };
}

describe('deriving on this thread', () => {
  it('derives a chunk only once the one before it is taken: ahead, it would only hold memory', async () => {
    const spans = chatSpans(IN_FLIGHT * CHUNK_SPANS + 1);
    const here = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false });
    let looked = 0; // a chunk's spans are asked whether they are new as it is sent to be derived
    const lookedAtEachTake: number[] = [];
    for await (const chunk of here.chunks(
      '',
      spans,
      () => (looked++, true),
      () => [],
    )) {
      lookedAtEachTake.push(looked);
      expect(chunk.spans.length).toBeGreaterThan(0);
    }
    expect(lookedAtEachTake.slice(0, 3)).toEqual([2 * CHUNK_SPANS, 3 * CHUNK_SPANS, 4 * CHUNK_SPANS]);
    expect(looked).toBe(spans.length);
  });

  it('reads each new message’s words from its value as it writes it: those of its stored JSON', async () => {
    const chunks = await all(createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false }), chatSpans(3));
    const messages = chunks.flatMap((c) => c.messages);
    expect(messages).toHaveLength(3);
    for (const m of messages) expect(m.words).toEqual(messageWords(Buffer.from(m.body).toString('utf8')));
  });

  it("lets I/O run between chunks: a transaction's statements go on while it derives", async () => {
    const spans = chatSpans(4 * CHUNK_SPANS);
    const here = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false });
    // turns of the event loop, as a statement's answer takes one (a callback after I/O)
    let turns = 0;
    let turning = true;
    const turn = () => {
      turns++;
      if (turning) setImmediate(turn);
    };
    setImmediate(turn);
    const turnsAtEachTake: number[] = [];
    await all(here, spans, () => turnsAtEachTake.push(turns));
    turning = false;
    expect(turnsAtEachTake).toHaveLength(4);
    for (let i = 1; i < 4; i++) expect(turnsAtEachTake[i]).toBeGreaterThan(turnsAtEachTake[i - 1]);
  });
});

describe('deriving on the worker thread', () => {
  it('gives, chunk by chunk and in order, what this thread gives', async () => {
    const spans = chatSpans(2 * CHUNK_SPANS + 7);
    const onWorker = createChunkedDerive({ payloadThresholdBytes: THRESHOLD });
    const here = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false });
    try {
      const [a, b] = await Promise.all([all(onWorker, spans), all(here, spans)]);
      expect(a.map((c) => c.spans.length)).toEqual([CHUNK_SPANS, CHUNK_SPANS, 7]);
      expect(comparable(a)).toEqual(comparable(b));
    } finally {
      await onWorker.close();
    }
  });

  it('gives what this thread gives for conversations whose long histories go as what each call adds', async () => {
    const conversation = (run: string) =>
      conversationSpans({
        run,
        system: 'Answer briefly.',
        questions: Array.from(
          { length: 30 },
          (_, i) => `question ${i} of ${run}: ${'why, 日本語 "quoted" '.repeat(60)}`,
        ),
        answer: (i) => `answer ${i} of ${run}: ${'because\n'.repeat(150)}`,
      });
    const [a, b, c] = [conversation('a'), conversation('b'), conversation('c')];
    // c's call 20 has an earlier message changed: it does not continue call 19, and is sent whole
    const edited = c[20].attributes['gen_ai.input.messages'] as string;
    c[20] = {
      ...c[20],
      attributes: {
        ...c[20].attributes,
        'gen_ai.input.messages': edited.replace('question 3 of c', 'question 3 of C'),
      },
    };
    const interleaved = a.flatMap((s, i) => [s, b[i], c[i]]);
    // transactions of 25 spans, in turn: the worker keeps what one sent for the next
    const transactions = Array.from({ length: Math.ceil(interleaved.length / 25) }, (_, i) =>
      interleaved.slice(i * 25, (i + 1) * 25),
    );
    const posted = vi.spyOn(Worker.prototype, 'postMessage');
    const onWorker = createChunkedDerive({ payloadThresholdBytes: THRESHOLD });
    const here = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false });
    try {
      for (const spans of transactions) {
        const [x, y] = await Promise.all([all(onWorker, spans), all(here, spans)]);
        expect(comparable(x)).toEqual(comparable(y));
        expect(messagesOf(x)).toEqual(messagesOf(y));
      }
      const sentAsTails = posted.mock.calls.flatMap(([m]) => (m as DeriveWorkerMessage).request.resent?.texts ?? []);
      expect(sentAsTails.filter((t) => t.tail !== undefined).length).toBeGreaterThan(40);
    } finally {
      posted.mockRestore();
      await onWorker.close();
    }
  });

  it('starts afresh when its worker is told to continue a text it does not hold: only that transaction fails', async () => {
    const spans = conversationSpans({
      run: 'lost',
      system: 'Answer briefly.',
      questions: Array.from({ length: 24 }, (_, i) => `question ${i}: ${'why '.repeat(1200)}`),
      answer: (i) => `answer ${i}`,
    });
    const [first, second] = [spans.slice(0, 12), spans.slice(12)];
    const onWorker = createChunkedDerive({ payloadThresholdBytes: THRESHOLD });
    const here = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false });
    const post = Worker.prototype.postMessage;
    try {
      await all(onWorker, first);
      // the worker and this thread no longer agree on what it holds
      const posted = vi.spyOn(Worker.prototype, 'postMessage').mockImplementation(function (
        this: Worker,
        message: DeriveWorkerMessage,
      ) {
        for (const t of message.request.resent?.texts ?? []) if (t.base !== undefined) t.base += 1_000_000;
        post.call(this, message);
      });
      const error = await all(onWorker, second).catch((e: unknown) => e);
      posted.mockRestore();
      expect(error).toMatchObject({ kind: 'unavailable', message: expect.stringContaining('does not hold text') });
      // the retry goes to a new worker, which is sent every text whole first
      expect(comparable(await all(onWorker, second))).toEqual(comparable(await all(here, second)));
    } finally {
      await onWorker.close();
    }
  });

  it('sends the steps of spans stored before (restated) with their bytes over buffers of their own', async () => {
    const spans = chatSpans(3);
    const onWorker = createChunkedDerive({ payloadThresholdBytes: THRESHOLD });
    const here = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false });
    try {
      const stored = () => false;
      const [[a], [b]] = await Promise.all(
        [onWorker, here].map(async (d) => {
          const out: DerivedChunk[] = [];
          for await (const chunk of d.chunks('', spans, stored, () => [])) out.push(chunk);
          return out;
        }),
      );
      expect(a.restated).toHaveLength(3);
      // a model step's request goes to the message store message by message
      const request = (c: DerivedChunk, i: number) => c.restated[i].step!.requestMessages![0].body;
      for (let i = 0; i < 3; i++) {
        // not a slice of a larger buffer (Node's shared pool, a list's), which a clone would send whole
        expect(request(a, i).buffer.byteLength).toBe(request(a, i).length);
        expect(Buffer.from(request(a, i)).equals(request(b, i))).toBe(true);
      }
    } finally {
      await onWorker.close();
    }
  });

  it('fails the transactions of a worker that dies as unavailable, then starts a new one', async () => {
    // each instance notes its start, says it is ready, then dies on its first message
    const dying = standInWorker(
      'dying-worker.mjs',
      (marker) => `import { appendFileSync } from 'node:fs';
      import { parentPort } from 'node:worker_threads';
      appendFileSync(${marker}, 'started\\n');
      parentPort.on('message', () => process.exit(3));
      parentPort.postMessage({ ready: true });`,
    );
    const chunked = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, workerScript: dying.script });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const error = await all(chunked, chatSpans(3)).catch((e: unknown) => e);
        expect(error).toBeInstanceOf(IngestError);
        expect(error).toMatchObject({
          kind: 'unavailable',
          message: expect.stringContaining('the derive worker exited (code 3)'),
        });
      }
      expect(dying.starts()).toBe('started\nstarted\n'); // a new worker for the second
    } finally {
      await chunked.close();
    }
  });

  it('goes on with a new worker when its worker stopped between two of its chunks: a chunk needs nothing of the others', async () => {
    // answers one chunk more than are sent ahead, as the real worker does, then stops, idle
    const { script, starts: stopped } = standInWorker(
      'tiring-worker.mjs',
      (marker) => `import { writeFileSync } from 'node:fs';
      import { parentPort, workerData } from 'node:worker_threads';
      import { ChunkDeriver } from ${CHUNK_MODULE};
      const deriver = new ChunkDeriver(workerData.thresholdBytes);
      let answered = 0;
      parentPort.on('message', (m) => {
        if (m.type !== 'chunk') return;
        parentPort.postMessage({ result: deriver.derive(m.request) });
        if (++answered === ${IN_FLIGHT + 1}) setTimeout(() => (writeFileSync(${marker}, 'stopped'), process.exit(0)), 20);
      });
      parentPort.postMessage({ ready: true });`,
    );
    const spans = chatSpans((IN_FLIGHT + 2) * CHUNK_SPANS);
    const chunked = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, workerScript: script });
    const here = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false });
    try {
      const chunks = chunked.chunks(
        '',
        spans,
        () => true,
        () => [],
      );
      const taken: DerivedChunk[] = [];
      const first = await chunks.next(); // chunk 0; chunks 1 to IN_FLIGHT are sent
      taken.push(first.value as DerivedChunk);
      // the worker answers them and stops; its exit reaches this thread a moment after
      await vi.waitFor(() => expect(stopped()).toBe('stopped'), { timeout: 30_000, interval: 20 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      // chunks 1 to IN_FLIGHT, then the last, sent to a new worker
      for await (const chunk of chunks) taken.push(chunk);
      expect(taken).toHaveLength(IN_FLIGHT + 2);
      expect(comparable(taken)).toEqual(comparable(await all(here, spans)));
    } finally {
      await chunked.close();
    }
  });

  it('stops a worker that answers no chunk in time: its transaction fails as unavailable, the next gets a new worker', async () => {
    const stuck = standInWorker(
      'stuck-worker.mjs',
      (marker) => `import { appendFileSync } from 'node:fs';
      import { parentPort } from 'node:worker_threads';
      appendFileSync(${marker}, 'started\\n');
      parentPort.on('message', () => {}); // never answers
      parentPort.postMessage({ ready: true });`,
    );
    const lost: Error[] = [];
    const chunked = createChunkedDerive({
      payloadThresholdBytes: THRESHOLD,
      workerScript: stuck.script,
      chunkTimeoutMs: 200,
      onWorkerLost: (e) => lost.push(e),
    });
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        await expect(all(chunked, chatSpans(3))).rejects.toMatchObject({
          kind: 'unavailable',
          message: expect.stringContaining('answered no chunk for 200 ms'),
        });
      }
      expect(stuck.starts()).toBe('started\nstarted\n');
      expect(lost.map((e) => e.message)).toEqual([
        expect.stringContaining('answered no chunk'),
        expect.stringContaining('answered no chunk'),
      ]); // told, to be logged
    } finally {
      await chunked.close();
    }
  });

  it('derives on this thread from then on when the worker script cannot load, and says so once', async () => {
    const broken = standInWorker(
      'broken-worker.mjs',
      (marker) => `import { appendFileSync } from 'node:fs';
      appendFileSync(${marker}, 'started\\n');
      throw new Error('a broken build');`,
    );
    const told: Error[] = [];
    const chunked = createChunkedDerive({
      payloadThresholdBytes: THRESHOLD,
      workerScript: broken.script,
      onWorkerUnusable: (e) => told.push(e),
    });
    const here = createChunkedDerive({ payloadThresholdBytes: THRESHOLD, worker: false });
    try {
      const spans = chatSpans(CHUNK_SPANS + 3);
      // the transactions that met a broken worker are not stored: their senders retry; one
      // failure might have passed, two in a row say the script does not load
      for (let attempt = 0; attempt < 2; attempt++) {
        await expect(all(chunked, spans)).rejects.toMatchObject({
          kind: 'unavailable',
          message: expect.stringContaining('a broken build'),
        });
        expect(told).toHaveLength(attempt);
      }
      const [again, expected] = await Promise.all([all(chunked, spans), all(here, spans)]);
      expect(comparable(again)).toEqual(comparable(expected));
      await all(chunked, chatSpans(2));
      expect(told.map((e) => e.message)).toEqual([expect.stringContaining('a broken build')]);
      expect(broken.starts()).toBe('started\nstarted\n'); // not tried again
    } finally {
      await chunked.close();
    }
  });

  it('stops a worker stuck on a chunk of a transaction that gave up: the next transaction does not wait behind it', async () => {
    // the first worker answers one chunk and then never again; the second derives as the real one does
    const once = standInWorker(
      'stuck-once-worker.mjs',
      (marker) => `import { appendFileSync, readFileSync } from 'node:fs';
      import { parentPort, workerData } from 'node:worker_threads';
      import { ChunkDeriver } from ${CHUNK_MODULE};
      appendFileSync(${marker}, 'started\\n');
      const first = readFileSync(${marker}, 'utf8') === 'started\\n';
      const deriver = new ChunkDeriver(workerData.thresholdBytes);
      let answered = 0;
      parentPort.on('message', (m) => {
        if (m.type !== 'chunk' || (first && answered > 0)) return;
        answered++;
        parentPort.postMessage({ result: deriver.derive(m.request) });
      });
      parentPort.postMessage({ ready: true });`,
    );
    const chunked = createChunkedDerive({
      payloadThresholdBytes: THRESHOLD,
      workerScript: once.script,
      chunkTimeoutMs: 200,
    });
    try {
      const chunks = chunked.chunks(
        '',
        chatSpans(CHUNK_SPANS + 3),
        () => true,
        () => [],
      );
      expect((await chunks.next()).done).toBe(false); // chunk 0; chunk 1 is in flight, and stuck
      await chunks.return(undefined); // the transaction gives up (its COPY failed, say): its job is cancelled
      await new Promise((resolve) => setTimeout(resolve, 400)); // the watchdog stops the stuck worker meanwhile
      expect(await all(chunked, chatSpans(3))).toHaveLength(1);
      expect(once.starts()).toBe('started\nstarted\n');
    } finally {
      await chunked.close();
    }
  });
});
