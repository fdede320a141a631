/**
 * @module derive/derive-thread
 * Where ingest derives the steps it copies (derive-chunk.ts): on a worker thread when the
 * built worker script is there (derive-worker.js), else on this thread. Deriving costs more
 * CPU than decoding and writing spans; on the worker it runs beside PostgreSQL's backends
 * instead of keeping them waiting, and the encoded tuples come back transferred, not copied.
 *
 * One worker serves every transaction, in chunks of CHUNK_SPANS, at most IN_FLIGHT ahead, so
 * a large request is never cloned whole; a long text that continues one sent before (a resent
 * history) goes as what it adds (resent-texts.ts). A worker that dies or stops answering for
 * CHUNK_TIMEOUT_MS fails the transactions it held as unavailable (their senders retry); a
 * script that cannot load is given up on and derivation stays on this thread. A transaction
 * over WORKER_MAX_CHARS is derived here, a chunk at a time, since cloning it would cost its
 * memory a second time for no gain in throughput (docs/benchmarks.md, "The derive worker").
 */
import { existsSync } from 'node:fs';
import { setImmediate } from 'node:timers/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { IngestError } from '../errors.js';
import { packageRoot } from '../package-root.js';
import type { AttributeValue, LogRecord, SpanRecord } from '../spans/span-record.js';
import { ChunkDeriver, type DeriveChunkRequest, type DeriveChunkResult, unpackMessages } from './derive-chunk.js';
import type { DeriveWorkerAnswer, DeriveWorkerMessage } from './derive-worker.js';
import { ResentTextSender } from './resent-texts.js';
import { readValueWords } from '../tapes/message-rows.js';

/** Spans per chunk sent to the worker. */
export const CHUNK_SPANS = 64;
/**
 * Chunks of one transaction sent ahead of the one its COPY is taking: a whole batch of the
 * SDKs' default size (512 spans), so the worker derives it while the spans are written
 * instead of waiting for the steps' COPY to take each chunk. What it clones at once stays
 * under WORKER_MAX_CHARS per transaction.
 */
export const IN_FLIGHT = 8;
/** Characters (of strings, and bytes) to clone past which a transaction is derived on this thread. */
export const WORKER_MAX_CHARS = 4 * 1024 * 1024;
/**
 * How long the worker may hold chunks without answering one before it is stopped: a chunk
 * takes milliseconds (at most a second or so for 4 Mi characters), so this is a stuck worker.
 */
export const CHUNK_TIMEOUT_MS = 30_000;
/** Workers in a row that stop before their script loads after which none is started again. */
const UNUSABLE_AFTER = 2;

export interface DerivedChunk extends DeriveChunkResult {
  /** the chunk's spans (local and dialect errors index them) */
  spans: readonly SpanRecord[];
}

export interface ChunkedDerive {
  /**
   * Derives a transaction's spans, chunk by chunk, in order. Stopping the iteration early
   * (the COPY failed) cancels the rest.
   */
  chunks(
    tenant: string,
    spans: readonly SpanRecord[],
    isNew: (s: SpanRecord) => boolean,
    logsOf: (s: SpanRecord) => LogRecord[],
  ): AsyncGenerator<DerivedChunk>;
  close(): Promise<void>;
}

export interface ChunkedDeriveSettings {
  payloadThresholdBytes: number;
  /** told when a dialect throws on a span, which is then stored with no step */
  onDialectError?: (span: SpanRecord, error: unknown, layout: string) => void;
  /** false: derive on this thread (tests of both ways) */
  worker?: boolean;
  /** the worker's script, where not the built derive-worker.js (tests) */
  workerScript?: string;
  /** told, once, when the worker script cannot load: derivation stays on this thread */
  onWorkerUnusable?: (error: Error) => void;
  /** told when a worker stops or is stopped with requests on it (they fail as unavailable) */
  onWorkerLost?: (error: Error) => void;
  /** CHUNK_TIMEOUT_MS unless set (tests) */
  chunkTimeoutMs?: number;
}

interface Runner {
  /** chunks of a transaction sent before the first is taken */
  readonly ahead: number;
  submit(req: DeriveChunkRequest): Promise<DeriveChunkResult>;
  cancel(job: number): void;
  close(): Promise<void>;
}

export function createChunkedDerive(settings: ChunkedDeriveSettings): ChunkedDerive {
  const script = settings.worker === false ? null : (settings.workerScript ?? workerScript());
  const here = inProcess(settings.payloadThresholdBytes);
  const worker = script
    ? new WorkerRunner(script, settings.payloadThresholdBytes, settings.chunkTimeoutMs ?? CHUNK_TIMEOUT_MS, {
        unusable: settings.onWorkerUnusable,
        lost: settings.onWorkerLost,
      })
    : null;
  let nextJob = 1;
  return {
    async *chunks(tenant, spans, isNew, logsOf) {
      const job = nextJob++;
      const runner: Runner = worker?.usable && !holdsMoreThan(spans, logsOf, WORKER_MAX_CHARS) ? worker : here;
      const count = Math.ceil(spans.length / CHUNK_SPANS);
      const partOf = (k: number) => spans.slice(k * CHUNK_SPANS, (k + 1) * CHUNK_SPANS);
      const pending: Promise<DeriveChunkResult>[] = [];
      const send = (k: number): void => {
        const part = partOf(k);
        const answer = runner.submit({
          job,
          tenant,
          spans: part,
          isNew: part.map(isNew),
          logs: logsOfEach(part, logsOf),
        });
        answer.catch(() => {}); // awaited in turn below; a failure before then must not go unhandled
        pending.push(answer);
      };
      let done = 0;
      try {
        for (let k = 0; k < Math.min(count, runner.ahead); k++) send(k);
        while (done < count) {
          const result = await pending[done];
          const part = partOf(done);
          done++;
          if (pending.length < count) send(pending.length);
          for (const e of result.dialectErrors) settings.onDialectError?.(part[e.index], e.error, e.layout);
          yield { ...result, spans: part };
        }
      } finally {
        if (done < count) runner.cancel(job);
      }
    },
    close: async () => {
      await worker?.close();
    },
  };
}

const nonEmpty = (logs: LogRecord[]): LogRecord[] | null => (logs.length > 0 ? logs : null);

function inProcess(thresholdBytes: number): Runner {
  // Here each new message's words are read from its value as it is written, not from its
  // stored JSON decoded and parsed again later (message-rows.ts readWordsAhead).
  const deriver = new ChunkDeriver(thresholdBytes, readValueWords);
  return {
    // Here a chunk derived ahead runs no sooner: it would only hold memory.
    ahead: 1,
    // A macrotask first, so the transaction's statements (its locks, then the spans' COPY)
    // proceed between chunks: otherwise the chunks all run, one microtask after the other,
    // before the transaction's first statement is answered, and PostgreSQL waits meanwhile.
    submit: async (req) => {
      await setImmediate();
      return deriver.derive(req);
    },
    cancel: () => {},
    close: async () => {},
  };
}

/**
 * The built worker script: beside this module when it runs from dist/, else (tests run the
 * TypeScript sources) in the package's dist/, which `npm test` builds first. null: not built.
 */
function workerScript(): string | null {
  const here = fileURLToPath(import.meta.url);
  const beside = path.join(path.dirname(here), 'derive-worker.js');
  if (here.endsWith('.js') && existsSync(beside)) return beside;
  const built = path.join(packageRoot(), 'dist', 'src', 'derive', 'derive-worker.js');
  return existsSync(built) ? built : null;
}

interface Waiter {
  resolve(result: DeriveChunkResult): void;
  reject(error: unknown): void;
}

class WorkerRunner implements Runner {
  readonly ahead = IN_FLIGHT;
  private worker: Worker | null = null;
  /** the long texts the current worker keeps, to send only what a text adds to one of them */
  private texts = new ResentTextSender();
  /** per job, the chunks sent and not answered yet, oldest first */
  private readonly waiting = new Map<number, Waiter[]>();
  private closed = false;
  /**
   * false once workers stopped before their script loaded UNUSABLE_AFTER times in a row: the
   * script does not load (a broken build), not a passing failure
   */
  usable = true;
  /** workers in a row that stopped before they were ready */
  private failedStarts = 0;
  /** whether the current worker's script has loaded */
  private ready = false;
  /** chunks the current worker was sent and has not answered (cancelled jobs' included: it works on them all the same) */
  private inFlight = 0;
  /**
   * armed while the current worker, loaded (loading is not answering slowly), has chunks in
   * flight: fires when it has answered none for chunkTimeoutMs
   */
  private watchdog: NodeJS.Timeout | null = null;

  constructor(
    private readonly script: string,
    private readonly thresholdBytes: number,
    private readonly chunkTimeoutMs: number,
    private readonly tell: { unusable?: (error: Error) => void; lost?: (error: Error) => void } = {},
  ) {}

  submit(request: DeriveChunkRequest): Promise<DeriveChunkResult> {
    return new Promise((resolve, reject) => {
      try {
        const worker = this.started();
        const { spans, resent, sent } = this.texts.prepare(request.tenant, request.spans);
        worker.postMessage({ type: 'chunk', request: { ...request, spans, resent } } satisfies DeriveWorkerMessage);
        sent();
        const queue = this.waiting.get(request.job) ?? [];
        this.waiting.set(request.job, queue);
        queue.push({ resolve, reject });
        this.inFlight++;
        if (this.ready) this.watchdog ??= this.arm(worker);
      } catch (error) {
        reject(error);
      }
    });
  }

  cancel(job: number): void {
    this.waiting.delete(job);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    this.closed = true;
    this.disarm();
    this.failAll(unavailable('tapedeck is shutting down'));
    if (worker) await worker.terminate();
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    if (this.closed) throw unavailable('tapedeck is shutting down');
    const worker = new Worker(this.script, { workerData: { thresholdBytes: this.thresholdBytes } });
    // Requests and the database keep the process alive, not an idle worker.
    worker.unref();
    worker.on('message', (answer: DeriveWorkerAnswer) => {
      // A stopped worker's late answers: its waiters were failed when it was lost.
      if (this.worker !== worker) return;
      if (!('ready' in answer)) {
        this.answered(answer);
        return;
      }
      this.ready = true;
      this.failedStarts = 0;
      if (this.inFlight > 0) this.watchdog ??= this.arm(worker);
    });
    const lost = (error: Error): void => this.lose(worker, error);
    worker.on('error', (error) => lost(unavailable(`the derive worker failed (${error.message})`, error)));
    worker.on('exit', (code) => lost(unavailable(`the derive worker exited (code ${code})`)));
    // An answer that cannot be read would leave its waiter, and the order of the rest, wrong.
    worker.on('messageerror', (error) => {
      lost(unavailable('an answer of the derive worker could not be read', error));
      void worker.terminate();
    });
    this.worker = worker;
    this.texts = new ResentTextSender();
    this.ready = false;
    this.inFlight = 0;
    return worker;
  }

  /**
   * The current worker stopped, or is being stopped: its transactions fail with `error`, the
   * next one starts a new worker (unless the script proved it cannot load).
   */
  private lose(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    this.disarm();
    if (!this.ready && ++this.failedStarts >= UNUSABLE_AFTER && this.usable) {
      this.usable = false;
      this.tell.unusable?.(error);
    } else if (this.inFlight > 0) {
      this.tell.lost?.(error);
    }
    this.failAll(error);
  }

  /** Stops the worker if no chunk is answered for chunkTimeoutMs (each answer restarts the count). */
  private arm(worker: Worker): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.watchdog = null;
      if (this.inFlight === 0) return;
      this.lose(
        worker,
        unavailable(`the derive worker answered no chunk for ${this.chunkTimeoutMs} ms and was stopped`),
      );
      void worker.terminate();
    }, this.chunkTimeoutMs);
    timer.unref();
    return timer;
  }

  private disarm(): void {
    if (this.watchdog) clearTimeout(this.watchdog);
    this.watchdog = null;
  }

  private answered(answer: Exclude<DeriveWorkerAnswer, { ready: true }>): void {
    const job = 'result' in answer ? answer.result.job : answer.job;
    const queue = this.waiting.get(job);
    const waiter = queue?.shift();
    if (queue?.length === 0) this.waiting.delete(job);
    this.inFlight--;
    // (armed whenever the worker is ready with chunks in flight, and answers come when ready)
    if (this.inFlight === 0) this.disarm();
    else this.watchdog?.refresh();
    if (!waiter) return; // a cancelled job's late answer
    if ('result' in answer) waiter.resolve(withMessages(answer.result));
    else waiter.reject(answer.error);
  }

  private failAll(error: Error): void {
    for (const queue of this.waiting.values()) for (const waiter of queue) waiter.reject(error);
    this.waiting.clear();
  }
}

/**
 * A request whose derivation the worker did not finish: nothing of it was stored (its
 * transaction rolls back), and a retry, on a new worker, can succeed.
 */
function unavailable(why: string, cause?: unknown): IngestError {
  return new IngestError('unavailable', `${why}; nothing from this request was stored, retry later`, {
    cause,
    retryAfterSeconds: 1,
  });
}

/**
 * Whether what would be cloned to the worker for these spans (their attributes, their
 * events' attributes and their log records) holds more than `limit` characters of strings
 * and bytes; stops counting once it does.
 */
function holdsMoreThan(spans: readonly SpanRecord[], logsOf: (s: SpanRecord) => LogRecord[], limit: number): boolean {
  let total = 0;
  for (const span of spans) {
    total += charsIn(span.attributes);
    for (const event of span.events) total += charsIn(event.attributes);
    for (const log of logsOf(span)) total += charsIn(log.body) + charsIn(log.attributes);
    if (total > limit) return true;
  }
  return false;
}

/**
 * Characters of strings and bytes in a value. A module function, not a closure made per call
 * (docs/architecture.md, "Decisions and why").
 */
function charsIn(value: AttributeValue | undefined): number {
  if (typeof value === 'string' || value instanceof Uint8Array) return value.length;
  let n = 0;
  if (Array.isArray(value)) for (const v of value) n += charsIn(v);
  else if (value !== null && typeof value === 'object') for (const key in value) n += charsIn(value[key]);
  return n;
}

/** Each span's log records, null for none. */
function logsOfEach(spans: readonly SpanRecord[], logsOf: (s: SpanRecord) => LogRecord[]): (LogRecord[] | null)[] {
  const out: (LogRecord[] | null)[] = [];
  for (const s of spans) out.push(nonEmpty(logsOf(s)));
  return out;
}

/** A worker's result with its packed messages as views (derive-chunk.ts packMessages). */
function withMessages(result: DeriveChunkResult): DeriveChunkResult {
  return result.packedMessages ? { ...result, messages: unpackMessages(result.packedMessages) } : result;
}
