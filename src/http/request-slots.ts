/**
 * @module http/request-slots
 * A bound on the requests of one kind (read API, replay) worked on at once, so a burst of
 * expensive reads cannot hold unbounded memory or starve ingest of the event loop and the
 * database. Up to `concurrency` requests work; up to `maxWaiting` more wait, in arrival order,
 * for at most `waitMs` each. Past either bound, or when the wait runs out, the request is
 * answered 429 `busy` with Retry-After: nothing was read or changed, so the same request may
 * pass later. A request whose client goes away stops waiting.
 *
 * The slot is taken before the handler runs, so a waiting request has not read its body.
 */
import type { MiddlewareHandler } from 'hono';
import { ApiError } from '../errors.js';

export interface RequestSlotSettings {
  /** what the requests are, for messages ("read", "replay") */
  kind: string;
  /** the setting that sets concurrency, for messages */
  setting: string;
  concurrency: number;
  maxWaiting: number;
  waitMs: number;
}

export interface RequestSlots {
  /** Resolves with the slot's release once it is this request's turn; throws ApiError('busy'). */
  acquire(signal?: AbortSignal): Promise<() => void>;
  readonly working: number;
  readonly waiting: number;
}

/** Requests that may wait per request working: a short queue absorbs a burst, no more. */
export const WAITING_PER_SLOT = 4;

export function createRequestSlots(settings: RequestSlotSettings): RequestSlots {
  let working = 0;
  const queue: (() => void)[] = [];
  const release = (): void => {
    const next = queue.shift();
    if (next) next();
    else working--;
  };
  const oneRelease = (): (() => void) => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
    };
  };
  const busy = (why: string): ApiError => new ApiError('busy', `${why}; retry shortly`, { retryAfterSeconds: 1 });
  return {
    get working() {
      return working;
    },
    get waiting() {
      return queue.length;
    },
    acquire(signal) {
      if (working < settings.concurrency) {
        working++;
        return Promise.resolve(oneRelease());
      }
      if (queue.length >= settings.maxWaiting) {
        return Promise.reject(
          busy(
            `too many ${settings.kind} requests at once (${settings.concurrency} working and ${queue.length} waiting; ${settings.setting})`,
          ),
        );
      }
      return new Promise((resolve, reject) => {
        const start = (): void => {
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          resolve(oneRelease());
        };
        const leave = (error: ApiError): void => {
          const at = queue.indexOf(start);
          if (at < 0) return; // its turn came first
          queue.splice(at, 1);
          clearTimeout(timer);
          signal?.removeEventListener('abort', onAbort);
          reject(error);
        };
        const onAbort = (): void => leave(busy(`the ${settings.kind} request was cancelled while waiting for a slot`));
        const timer = setTimeout(
          () => leave(busy(`no ${settings.kind} slot came free within ${settings.waitMs} ms (${settings.setting})`)),
          settings.waitMs,
        );
        queue.push(start);
        if (signal?.aborted) onAbort();
        else signal?.addEventListener('abort', onAbort, { once: true });
      });
    },
  };
}

/**
 * Takes a slot of `slots` for the requests whose path `applies` to, until the handler has
 * answered; passes every other request through.
 */
export function requestSlotsFor(applies: (path: string) => boolean, slots: RequestSlots): MiddlewareHandler {
  return async (c, next) => {
    if (!applies(c.req.path)) return next();
    const release = await slots.acquire(c.req.raw.signal);
    try {
      await next();
    } finally {
      release();
    }
  };
}
