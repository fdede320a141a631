/**
 * A step's identities (request and response digests, fingerprint) describe the value as
 * recorded, so they do not depend on --payload-threshold-bytes: every corpus capture stored
 * by two servers, one that offloads nearly every value and one that offloads only the
 * 300 KB prompts, gives every step the same identities. A replay digests the prompt it reads
 * back (offloaded parts resolved), and what it expects for each model step is that step's
 * request_digest on the tape, offloaded or not; a strict replay's divergence says so over HTTP.
 * A store whose steps carry what an older normalizer wrote (digests of the stored form or of
 * the messages without the tools offered, fingerprints named by the response model) gets
 * today's identities back from `tapedeck reindex`. A strict replay names a changed tool set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/json/canonical.js';
import type { Step, Tape } from '../../src/normalize/step.js';
import type { JsonValue } from '../../src/json/json-value.js';
import { defaultReplaySettings } from '../../src/replay/settings.js';
import { buildSnapshot } from '../../src/replay/snapshot.js';
import { requestDigestOf, responseDigestOf } from '../../src/normalize/finish.js';
import { NORMALIZER_VERSION } from '../../src/normalize/normalize.js';
import { hasStepsOlderThan, reindex } from '../../src/tapes/reindex.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { type CaptureRef, listCaptures } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { START_TIMEOUT_MS, startTestTapedeck, type TestTapedeck } from '../helpers/tapedeck-server.js';
import { ingestRecords, loadCaptureRecords } from '../unit/runs/store-fixtures.js';

type Any = any;

const SMALL_THRESHOLD = 64;
const DEFAULT_THRESHOLD = 256 * 1024;

const hasRef = (v: JsonValue | null): boolean => JSON.stringify(v).includes('"$payload"');

async function tapesOf(t: TestTapedeck): Promise<Map<string, Tape>> {
  const runs = await t.running.store.db.query<{ run: string }>('SELECT run FROM tapedeck.runs ORDER BY run');
  const tapes = new Map<string, Tape>();
  for (const { run } of runs) tapes.set(run, (await readTape(t.running.store, '', run)) as Tape);
  return tapes;
}

const identity = (s: Step) => ({
  span: `${s.trace_id}/${s.span_id}`,
  request_digest: s.request_digest,
  response_digest: s.response_digest,
  fingerprint: s.fingerprint,
});

describe.each(databaseKinds)('identities whatever the payload threshold, on %s', (kind) => {
  let small: TestTapedeck;
  let large: TestTapedeck;
  let smallTapes: Map<string, Tape>;
  let largeTapes: Map<string, Tape>;

  beforeAll(async () => {
    small = await startTestTapedeck(kind, { payloadThresholdBytes: SMALL_THRESHOLD });
    large = await startTestTapedeck(kind, { payloadThresholdBytes: DEFAULT_THRESHOLD });
    for (const ref of listCaptures()) {
      const records = await loadCaptureRecords(ref);
      await ingestRecords(small.running.store, records);
      await ingestRecords(large.running.store, records);
    }
    smallTapes = await tapesOf(small);
    largeTapes = await tapesOf(large);
  }, START_TIMEOUT_MS + 240_000);

  afterAll(async () => {
    await small?.close();
    await large?.close();
  });

  it('gives every step of every run the same digests and fingerprint', () => {
    expect([...smallTapes.keys()]).toEqual([...largeTapes.keys()]);
    let offloaded = 0;
    for (const [run, tape] of smallTapes) {
      const other = largeTapes.get(run) as Tape;
      // By span: ordering ties by the tool calls an answer asked for cannot see an offloaded answer's
      const bySpan = (t: Tape) => t.steps.map(identity).sort((a, b) => a.span.localeCompare(b.span));
      expect(bySpan(tape), run).toEqual(bySpan(other));
      for (const s of tape.steps) if (hasRef(s.request) || hasRef(s.response)) offloaded++;
    }
    // The small threshold did offload (most steps), so the comparison covers stored references.
    expect(offloaded).toBeGreaterThan(50);
  });

  it('digests an offloaded value as the value it stands for (with the tools offered)', async () => {
    let checked = 0;
    for (const [run, tape] of smallTapes) {
      const resolved = (await readTape(small.running.store, '', run, { resolve: true })) as Tape;
      expect(resolved.resolved_partial ?? false).toBe(false);
      for (const s of tape.steps) {
        const r = resolved.steps[s.index] as Step;
        if (hasRef(s.request)) {
          expect(s.request_digest, `${run} step ${s.index}`).toBe(requestDigestOf(r));
          checked++;
        }
        if (hasRef(s.response)) expect(s.response_digest, `${run} step ${s.index}`).toBe(responseDigestOf(r.response));
      }
    }
    expect(checked).toBeGreaterThan(50);
  });

  it("expects each model step's request_digest in a replay, offloaded or not", async () => {
    for (const [t, tapes] of [
      [small, smallTapes],
      [large, largeTapes],
    ] as const) {
      let compared = 0;
      let offloadedCompared = 0;
      for (const [run, tape] of tapes) {
        const snapshot = await buildSnapshot(
          tape,
          { readPayload: (ref) => t.running.store.payloads.get(ref) },
          { mode: 'loose', settings: defaultReplaySettings, charge: () => {} },
        ).catch(() => null); // a run with an unanswered model step cannot be replayed at all
        if (!snapshot) continue;
        for (const entry of snapshot.llm) {
          const step = tape.steps[entry.step] as Step;
          expect(entry.digest, `${run} step ${entry.step}`).toBe(step.request_digest);
          compared++;
          if (hasRef(step.request)) offloadedCompared++;
        }
      }
      expect(compared).toBeGreaterThan(50);
      if (t === small) expect(offloadedCompared).toBeGreaterThan(50);
      else expect(offloadedCompared).toBeGreaterThan(0); // the 300 KB prompt
    }
  });

  it('names the tape request_digest as expected_digest when a strict replay diverges at an offloaded prompt', async () => {
    const firstLlm = (tape: Tape) => tape.steps.find((s) => s.kind === 'llm');
    const run = [...largeTapes.entries()].find(([, tape]) => hasRef(firstLlm(tape)?.request ?? null));
    expect(run).toBeDefined();
    const [runId, tape] = run as [string, Tape];
    const created = await fetch(`${large.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run: runId, mode: 'strict' }),
    });
    expect(created.status).toBe(201);
    const { base_urls } = (await created.json()) as { base_urls: { openai: string } };
    const call = await fetch(`${large.url}${base_urls.openai}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'something else' }] }),
    });
    expect(call.status).toBe(409);
    const body = (await call.json()) as { error: { expected_digest: string } };
    expect(body.error.expected_digest).toBe(firstLlm(tape)?.request_digest);
  });

  it('names a changed tool set as the difference when a strict replay diverges', async () => {
    const ref = listCaptures().find((c) => c.layout === 'openllmetry-openai' && c.scenario === 'weather');
    const truth = (await loadCaptureRecords(ref as CaptureRef)).groundTruth;
    const request = truth.steps.find((st) => st.type === 'model_call')?.request as Record<string, Any>;
    expect(request.tools).toHaveLength(1);
    const created = await fetch(`${large.url}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run: truth.session_id, mode: 'strict' }),
    });
    const { base_urls } = (await created.json()) as { base_urls: { openai: string } };
    const ask = (body: unknown) =>
      fetch(`${large.url}${base_urls.openai}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const described = structuredClone(request);
    described.tools[0].function.description = 'Get the weather forecast for a city.';
    for (const [tools, recorded, got] of [
      [described.tools, 'Get the current weather', 'Get the weather forecast'],
      [[], 'get_weather', ''],
    ] as const) {
      const diverged = await ask({ ...request, tools });
      expect(diverged.status).toBe(409);
      const { error } = (await diverged.json()) as { error: Any };
      expect(error.type).toBe('replay_divergence');
      expect(error.expected_digest).not.toBe(error.got_digest);
      expect(error.difference).toMatchObject({ field: 'tools', message: null, role: null });
      expect(error.difference.recorded).toContain(recorded);
      expect(error.difference.got).toContain(got);
    }
    expect((await ask(request)).status).toBe(200);
  });

  it('reindex rewrites the identities an older normalizer stored', async () => {
    const db = small.running.store.db;
    // What the older normalizer stored: digests of the stored form, of the messages alone (no
    // tools), and model steps' fingerprints named by the response model.
    let rewritten = 0;
    for (const tape of smallTapes.values()) {
      for (const s of tape.steps) {
        if (s.request === null) continue;
        const old = digestOf(s.request) as string;
        const name = s.kind === 'llm' ? `llm:${s.model}` : s.fingerprint.slice(0, s.fingerprint.indexOf('#'));
        await db.query(
          `UPDATE tapedeck_store.steps SET request_digest = $3, fingerprint = $4, normalizer_version = $5
            WHERE trace_id = $1::bytea AND span_id = $2::bytea`,
          [Buffer.from(s.trace_id, 'hex'), Buffer.from(s.span_id, 'hex'), old, `${name}#${old.slice(0, 16)}`, 7],
        );
        rewritten++;
      }
    }
    expect(rewritten).toBeGreaterThan(50);
    expect(await hasStepsOlderThan(db, NORMALIZER_VERSION)).toBe(true);
    const changed = [...(await tapesOf(small)).values()].flatMap((t) => t.steps.map(identity));
    const expected = [...smallTapes.values()].flatMap((t) => t.steps.map(identity));
    expect(changed).not.toEqual(expected);

    await reindex(db, small.running.store.derive);
    expect(await hasStepsOlderThan(db, NORMALIZER_VERSION)).toBe(false);
    const after = [...(await tapesOf(small)).values()].flatMap((t) => t.steps.map(identity));
    const sorted = (list: ReturnType<typeof identity>[]) => [...list].sort((a, b) => a.span.localeCompare(b.span));
    expect(sorted(after)).toEqual(sorted(expected));
  });
});
