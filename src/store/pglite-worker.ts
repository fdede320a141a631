/**
 * @module store/pglite-worker
 * The worker thread that holds an on-disk PGlite (pglite-thread.ts). PGlite runs each
 * statement in WebAssembly on the thread that calls it, so on the main thread a long statement
 * would stop every timer and request; here it stops only this thread, which the main thread can
 * terminate when a deadline passes. Messages are handled one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { PGlite, types } from '@electric-sql/pglite';

export interface PgliteRequest {
  id: number;
  op: 'query' | 'exec' | 'close';
  sql?: string;
  params?: unknown[];
}

export type PgliteReply =
  | { id: number; rows: unknown[] }
  | { id: number; error: { message: string; name?: string; code?: unknown; detail?: unknown } };

const port = parentPort;
if (!port) throw new Error('pglite-worker runs as a worker thread');
const db = await PGlite.create(workerData.dataDir as string, {
  parsers: { [types.INT8]: (value: string) => BigInt(value) },
});
let chain: Promise<void> = Promise.resolve();
port.on('message', (request: PgliteRequest) => {
  chain = chain.then(() => answer(request));
});
port.postMessage({ ready: true });

async function answer(request: PgliteRequest): Promise<void> {
  try {
    let rows: unknown[] = [];
    if (request.op === 'query') rows = (await db.query(request.sql as string, request.params)).rows;
    else if (request.op === 'exec') await db.exec(request.sql as string);
    else if (!db.closed) await db.close();
    port?.postMessage({ id: request.id, rows } satisfies PgliteReply);
  } catch (error) {
    const e = error as { message?: string; name?: string; code?: unknown; detail?: unknown };
    port?.postMessage({
      id: request.id,
      error: { message: String(e?.message ?? error), name: e?.name, code: e?.code, detail: e?.detail },
    } satisfies PgliteReply);
  }
}
