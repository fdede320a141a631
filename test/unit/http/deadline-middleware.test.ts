/**
 * The per-request deadline (src/http/deadline-middleware.ts): one budget from
 * --query-deadline-ms per request, on the context, ended early when the client goes away,
 * and released when the handler returns or throws, so no work holding it runs on.
 */
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import type { Deadline } from '../../../src/deadline/deadline.js';
import { ApiError } from '../../../src/errors.js';
import { deadlineOf, requestDeadline } from '../../../src/http/deadline-middleware.js';
import { appWith } from '../../helpers/app.js';

function routes(handler: (deadline: Deadline) => Promise<Response>, budgetMs = 5_000): Hono {
  const app = new Hono();
  app.get('/read', requestDeadline(budgetMs), (c) => handler(deadlineOf(c)));
  return app;
}

describe('requestDeadline', () => {
  it('gives the handler a live deadline of the configured budget and releases it once answered', async () => {
    let seen: Deadline | undefined;
    let abortedWhileHandling: boolean | undefined;
    const app = appWith(
      routes(async (deadline) => {
        seen = deadline;
        abortedWhileHandling = deadline.signal.aborted;
        return new Response('ok');
      }, 1234),
    );
    const res = await app.request('/read');
    expect([res.status, await res.text()]).toEqual([200, 'ok']);
    expect([seen?.budgetMs, abortedWhileHandling]).toEqual([1234, false]);
    expect([seen?.signal.aborted, seen?.expired(), seen?.remainingMs()]).toEqual([true, true, 0]);
  });

  it('releases the deadline when the handler throws, and the error is still rendered', async () => {
    let seen: Deadline | undefined;
    const app = appWith(
      routes(async (deadline) => {
        seen = deadline;
        throw new ApiError('not_found', 'no run "x"');
      }),
    );
    const res = await app.request('/read');
    expect([res.status, await res.text()]).toEqual([404, '{"error":{"message":"no run \\"x\\"","type":"not_found"}}']);
    expect(seen?.signal.aborted).toBe(true);
  });

  it('answers 400 deadline_exceeded when the work outlasts the budget', async () => {
    const app = appWith(routes((deadline) => deadline.race(new Promise<Response>(() => {}), 'reading'), 20));
    const res = await app.request('/read');
    expect(res.status).toBe(400);
    expect(JSON.parse(await res.text()).error.type).toBe('deadline_exceeded');
  });

  it('ends the deadline as soon as the client goes away', async () => {
    const client = new AbortController();
    let stoppedAfterMs: number | undefined;
    const started = performance.now();
    const app = appWith(
      routes(
        (deadline) =>
          new Promise<Response>((resolve) => {
            deadline.signal.addEventListener('abort', () => {
              stoppedAfterMs = performance.now() - started;
              resolve(new Response('stopped'));
            });
            setTimeout(() => client.abort(), 10);
          }),
        60_000,
      ),
    );
    await app.request('/read', { signal: client.signal });
    expect(stoppedAfterMs).toBeLessThan(5_000);
  });

  it('makes a route that forgot the middleware fail loudly rather than run unbounded', async () => {
    const app = new Hono();
    app.get('/read', (c) => {
      deadlineOf(c);
      return new Response('unbounded');
    });
    const res = await appWith(app).request('/read');
    expect(res.status).toBe(500);
  });
});
