/**
 * @module derive/derive-worker
 * The worker thread's entry (derive-thread.ts starts it): derives the chunks it is sent and
 * answers each with its result, transferring the encoded tuples rather than copying them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import {
  ChunkDeriver,
  own,
  packMessages,
  withOwnBytes,
  type DeriveChunkRequest,
  type DeriveChunkResult,
} from './derive-chunk.js';
import { ResentTextReceiver } from './resent-texts.js';

export type DeriveWorkerMessage = { type: 'chunk'; request: DeriveChunkRequest };

/** `ready`: the script loaded (before it, a worker that fails cannot load, see derive-thread.ts) */
export type DeriveWorkerAnswer = { ready: true } | { result: DeriveChunkResult } | { job: number; error: unknown };

const port = parentPort;
if (!port) throw new Error('derive-worker runs as a worker thread (derive-thread.ts starts it)');
const deriver = new ChunkDeriver((workerData as { thresholdBytes: number }).thresholdBytes);
const texts = new ResentTextReceiver();

const answer = (message: DeriveWorkerAnswer, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

port.on('message', (message: DeriveWorkerMessage) => {
  const { job } = message.request;
  // Outside the try: a text this worker does not hold means it and its sender no longer agree,
  // and an uncaught error ends the worker, so the next transaction starts afresh with a new one.
  texts.restore(message.request.spans, message.request.resent);
  try {
    const derived = deriver.derive(message.request);
    // one piece over a buffer of its own: moved to the main thread, not copied again
    const steps = own(derived.steps);
    const packedMessages = packMessages(derived.messages);
    const result = {
      ...derived,
      steps: [steps],
      restated: derived.restated.map(withOwnBytes),
      messages: [],
      packedMessages,
    };
    answer({ result }, [
      steps.buffer as ArrayBuffer,
      packedMessages.buffer as ArrayBuffer,
      derived.slots.buffer as ArrayBuffer,
      derived.slotMessages.buffer as ArrayBuffer,
    ]);
  } catch (error) {
    answer({ job, error });
  }
});
answer({ ready: true });
