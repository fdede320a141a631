/**
 * `tapedeck reindex` re-derives agent steps stored by the normalizer before agent steps had
 * one canonical shape (version 11): OpenInference's agent input as bare text, OTel GenAI's
 * with the system instructions in the request and a finish reason on the answer. The store
 * holds real captures of one agent recorded through both layouts; their agent steps are set
 * back to what version 11 stored, and after the reindex they carry today's shape, with the
 * same request digest, response digest and fingerprint in both layouts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digestOf } from '../../src/json/canonical.js';
import type { JsonValue } from '../../src/json/json-value.js';
import type { Step, Tape } from '../../src/normalize/step.js';
import { NORMALIZER_VERSION } from '../../src/normalize/normalize.js';
import { hasStepsOlderThan, reindex } from '../../src/tapes/reindex.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { listCaptures } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import { ingestRecords, loadCaptureRecords, openTestStore, type TestStore } from '../unit/runs/store-fixtures.js';

const PREVIOUS_VERSION = 11;
const CAPTURES = ['openinference-openai/weather', 'otel-genai-openai/weather'];

type Obj = { [k: string]: JsonValue };

/** What version 11 stored for an agent step read from this layout. */
function previousShape(step: Step): { request: JsonValue; response: JsonValue; params: Obj } {
  const { instructions, ...params } = step.params;
  const request = step.request as Obj[];
  const response = step.response as Obj[];
  if (step.layout === 'openinference') return { request: request[0].content, response: response[0].content, params };
  return {
    request: [...((instructions as Obj[] | undefined) ?? []), ...request],
    response: response.map((m) => ({ ...m, finish_reason: 'stop' })),
    params,
  };
}

async function agentSteps(t: TestStore): Promise<Step[]> {
  const runs = await t.store.db.query<{ run: string }>('SELECT run FROM tapedeck.runs ORDER BY run');
  const steps: Step[] = [];
  for (const { run } of runs) steps.push(...((await readTape(t.store, '', run)) as Tape).steps);
  return steps.filter((s) => s.kind === 'agent').sort((a, b) => a.layout.localeCompare(b.layout));
}

const identities = (s: Step) => [s.request_digest, s.response_digest, s.fingerprint];

describe.each(databaseKinds)('reindex gives agent steps stored by version 11 their canonical shape, on %s', (kind) => {
  let t: TestStore;
  let today: Step[];

  beforeAll(async () => {
    t = await openTestStore(kind);
    for (const ref of listCaptures().filter((r) => CAPTURES.includes(`${r.layout}/${r.scenario}`)))
      await ingestRecords(t.store, await loadCaptureRecords(ref));
    today = await agentSteps(t);
  });
  afterAll(async () => {
    await t?.drop();
  });

  it('re-derives the request, response, params and identities version 11 stored', async () => {
    expect(today.map((s) => s.layout)).toEqual(['openinference', 'otel-genai']);
    expect(identities(today[0])).toEqual(identities(today[1]));

    for (const step of today) {
      const old = previousShape(step);
      const requestDigest = digestOf(old.request) as string;
      await t.store.db.query(
        `UPDATE tapedeck_store.steps
            SET request = $3, response = $4, params = $5::jsonb, request_digest = $6, response_digest = $7,
                fingerprint = $8, normalizer_version = $9
          WHERE trace_id = $1::bytea AND span_id = $2::bytea`,
        [
          Buffer.from(step.trace_id, 'hex'),
          Buffer.from(step.span_id, 'hex'),
          JSON.stringify(old.request),
          JSON.stringify(old.response),
          JSON.stringify(old.params),
          requestDigest,
          digestOf(old.response),
          `agent:${step.name}#${requestDigest.slice(0, 16)}`,
          PREVIOUS_VERSION,
        ],
      );
    }
    const stale = await agentSteps(t);
    expect(stale[0].request).toBe("What's the weather in Paris right now?");
    expect((stale[1].request as Obj[])[0].role).toBe('system');
    expect(identities(stale[0])).not.toEqual(identities(stale[1]));
    expect(await hasStepsOlderThan(t.store.db, NORMALIZER_VERSION)).toBe(true);

    await reindex(t.store.db, t.store.derive);

    expect(await hasStepsOlderThan(t.store.db, NORMALIZER_VERSION)).toBe(false);
    const after = await agentSteps(t);
    expect(after).toEqual(today);
    expect(after[0].request).toEqual([{ role: 'user', content: "What's the weather in Paris right now?" }]);
    expect(after[1].params.instructions).toEqual([
      {
        role: 'system',
        content:
          'You are a concise weather assistant. Use the get_weather tool for current conditions, then answer in one sentence.',
      },
    ]);
    expect(identities(after[0])).toEqual(identities(after[1]));
  });
});
