/**
 * @module http/deadline-middleware
 * One `--query-deadline-ms` budget per read request: the middleware starts it when the
 * request reaches the route, ends it early when the client goes away, puts it on the
 * context, and releases it when the handler returns (whatever it returned or threw), so
 * no query or loop holding it runs on after the answer (deadline/deadline.ts).
 */
import type { Context, MiddlewareHandler } from 'hono';
import { Deadline } from '../deadline/deadline.js';

declare module 'hono' {
  interface ContextVariableMap {
    deadline: Deadline;
  }
}

export function requestDeadline(budgetMs: number): MiddlewareHandler {
  return async (c, next) => {
    const deadline = new Deadline(budgetMs, { signal: c.req.raw.signal });
    c.set('deadline', deadline);
    try {
      await next();
    } finally {
      deadline.release();
    }
  };
}

/** The request's deadline; the route must run behind requestDeadline. */
export function deadlineOf(c: Context): Deadline {
  const deadline = c.get('deadline');
  if (!deadline) throw new Error(`${c.req.method} ${c.req.path} has no request deadline (requestDeadline middleware)`);
  return deadline;
}
