/**
 * The bound on export requests in flight across both transports (src/ingest/admission.ts):
 * past it a request is refused at once as busy (retryable), and a slot is freed however the
 * work ends; drained() is what graceful shutdown waits for.
 */
import { describe, expect, it } from 'vitest';
import { IngestError } from '../../../src/errors.js';
import { createAdmission } from '../../../src/ingest/admission.js';

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('admission', () => {
  it('runs up to the limit at once and refuses the next as busy, with Retry-After', async () => {
    const admission = createAdmission(2);
    const g = gate();
    const running = [admission.run(() => g.opened.then(() => 'a')), admission.run(() => g.opened.then(() => 'b'))];
    expect(admission.inflight).toBe(2);
    const refused = await admission.run(async () => 'c').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(IngestError);
    expect(refused).toMatchObject({
      kind: 'busy',
      retryAfterSeconds: 1,
      message: 'too many export requests in flight (limit 2); retry shortly',
    });
    g.open();
    expect(await Promise.all(running)).toEqual(['a', 'b']);
    expect(admission.inflight).toBe(0);
  });

  it('frees the slot when the work fails, and passes the failure on', async () => {
    const admission = createAdmission(1);
    await expect(
      admission.run(async () => {
        throw new Error('write failed');
      }),
    ).rejects.toThrow('write failed');
    expect(admission.inflight).toBe(0);
    expect(await admission.run(async () => 'next')).toBe('next');
  });

  it('is drained at once when idle, and otherwise when the last request in flight ends', async () => {
    const admission = createAdmission(3);
    await admission.drained();
    const g = gate();
    const work = admission.run(() => g.opened);
    let drained = false;
    const waiting = admission.drained().then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 10));
    expect(drained).toBe(false);
    g.open();
    await work;
    await waiting;
    expect(drained).toBe(true);
  });
});
