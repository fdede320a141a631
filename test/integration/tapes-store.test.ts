/**
 * Tapes read back from the store: for every corpus capture, the tape served by
 * GET /v1/tapes/{run} after ingest equals the tape the pure pipeline builds in memory
 * (normalize → finish → assemble, which test/unit/normalize checks against each
 * capture's ground truth), whichever order the spans arrive in. So what the store adds
 * (rows, run resolution, log joins, offloading under the threshold) changes nothing.
 *
 * Scope: the store path and the tape route. Layout rules are tested in test/unit/normalize.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestLogs, ingestSpans } from '../../src/ingest/ingest.js';
import { renderJson } from '../../src/json/canonical.js';
import { listCaptures, loadCapture, type Capture } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';
import { tapesOf } from '../helpers/tapes.js';

const captures = listCaptures();

async function getJson(url: string): Promise<{ status: number; text: string; body: any }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, text, body: JSON.parse(text) };
}

/** A tape as the in-memory pipeline builds it, rendered like the route renders steps. */
function expectedSteps(capture: Capture, run: string): unknown {
  const tape = tapesOf(capture.spans, capture.logs).find((t) => t.run === run);
  return JSON.parse(
    renderJson(tape?.steps.map(({ tool_call_id, ...s }) => (tool_call_id ? { tool_call_id, ...s } : s))),
  );
}

describe.each(databaseKinds)('tapes from the store on %s', (kind) => {
  let t: TestTapedeck;
  beforeAll(async () => {
    t = await startTestTapedeck(kind);
  });
  afterAll(async () => {
    await t?.close();
  });

  describe.each(captures.map((c) => [`${c.layout}/${c.scenario}`, c] as const))('%s', (_name, ref) => {
    it('serves the same tape as the in-memory pipeline, spans delivered parent-last', async () => {
      const capture = await loadCapture(ref);
      // Each capture gets its own tenant-free namespace through its own session/trace ids;
      // deliver children first and the log records before their spans.
      const reversed = [...capture.spans].reverse();
      await ingestLogs(capture.logs, { tenant: '' }, t.running.store.ingest);
      for (const span of reversed) await ingestSpans([span], { tenant: '' }, t.running.store.ingest);
      for (const expected of tapesOf(capture.spans, capture.logs)) {
        const { status, body, text } = await getJson(`${t.url}/v1/tapes/${encodeURIComponent(expected.run)}`);
        expect(status).toBe(200);
        expect(body.run).toBe(expected.run);
        expect(body.truncated).toBe(false);
        expect(body.tenant).toBeNull();
        if (!text.includes('"$payload"')) {
          expect(body.steps).toEqual(expectedSteps(capture, expected.run));
        } else {
          // Over --payload-threshold-bytes: the stored form holds a reference, and its digests and
          // fingerprints describe the value it stands for; resolved, the steps are what the
          // in-memory pipeline read, identities included.
          const identities = (steps: any[]) =>
            steps.map(({ request_digest, response_digest, fingerprint }) => ({
              request_digest,
              response_digest,
              fingerprint,
            }));
          const inMemory = expectedSteps(capture, expected.run) as any[];
          expect(identities(body.steps)).toEqual(identities(inMemory));
          const resolved = await getJson(`${t.url}/v1/tapes/${encodeURIComponent(expected.run)}?resolve=true`);
          expect(resolved.body.resolved_partial).toBe(false);
          expect(resolved.body.steps).toEqual(inMemory);
        }
        // The run's totals count what the tape shows: one step per model call.
        const listed = (await getJson(`${t.url}/v1/runs?limit=1000`)).body.runs.find(
          (r: any) => r.run === expected.run,
        );
        const count = (kind: string) => body.steps.filter((s: any) => s.kind === kind).length;
        expect([listed.steps, listed.llm_steps, listed.tool_steps]).toEqual([
          body.steps.length,
          count('llm'),
          count('tool'),
        ]);
        const inputs = body.steps.filter((s: any) => s.kind === 'llm').map((s: any) => s.tokens.input);
        if (inputs.every((n: number | null) => n !== null))
          expect(listed.tokens.input).toBe(inputs.reduce((a: number, b: number) => a + b, 0));
        // Nanosecond times are exact JSON integers, never strings or rounded doubles.
        expect(text).toContain(`"start_ns":${expected.steps[0].start_ns}`);
      }
    });
  });

  it('answers 404 with an error body for an unknown run', async () => {
    const { status, body } = await getJson(`${t.url}/v1/tapes/no-such-run`);
    expect(status).toBe(404);
    expect(body).toEqual({ error: { type: 'not_found', message: 'no run "no-such-run"' } });
  });

  it('returns keys in sorted order', async () => {
    const { text } = await getJson(`${t.url}/v1/runs?limit=1`);
    const keys = [...text.matchAll(/"([a-z_]+)":/g)].map((m) => m[1]);
    expect(keys.slice(0, 2)).toEqual(['next_cursor', 'runs']);
  });
});
