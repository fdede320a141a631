/**
 * Offloading at the payload layer: a 300 KiB prompt is offloaded, the stored
 * form shows the reference, resolving returns the original text, and the stored form and
 * its digest are the same whichever backend stored it (filesystem, memory, the PostgreSQL
 * table on every entry of databaseKinds). A tape with more payload than the budget comes
 * back resolved_partial with a prefix resolved, on every backend.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTestDatabase, databaseKinds } from '../helpers/databases.js';
import { digestOf } from '../../src/json/canonical.js';
import type { JsonValue } from '../../src/json/json-value.js';
import { createFsPayloadStore } from '../../src/payloads/fs-payload-store.js';
import { createMemoryPayloadStore } from '../../src/payloads/memory-payload-store.js';
import { createPgPayloadStore } from '../../src/payloads/pg-payload-store.js';
import { offloadLargeValues } from '../../src/payloads/offload.js';
import { createPayloadResolver } from '../../src/payloads/resolve-payloads.js';
import type { PayloadStore } from '../../src/payloads/payload-store.js';

const KiB = 1024;
const THRESHOLD = 256 * KiB;
const system = { role: 'system', content: 'You are a terse travel assistant.' };
// Varied text (not one repeated character) so nothing about the payload is accidental.
const prompt = Array.from(
  { length: (300 * KiB) / 32 },
  (_, i) => `line ${String(i).padStart(5, '0')}: où est la gare?\n`,
).join('');
const request = [system, { role: 'user', content: prompt }];
const response = [{ role: 'assistant', content: 'Tout droit.', finish_reason: 'stop' }];

const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup();
});

const backends: [string, () => Promise<PayloadStore>][] = [
  [
    'filesystem',
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), 'tapedeck-offload-'));
      cleanups.push(() => rm(dir, { recursive: true, force: true }));
      return createFsPayloadStore({ dir });
    },
  ],
  ['memory', async () => createMemoryPayloadStore()],
  ...databaseKinds.map((kind): [string, () => Promise<PayloadStore>] => [
    `postgresql table on ${kind}`,
    async () => {
      const t = await createTestDatabase(kind);
      cleanups.push(() => t.drop());
      return createPgPayloadStore({ db: t.db });
    },
  ]),
];

describe.each(backends)('offload and resolve on %s', (_name, open) => {
  it('offloads a 300 KiB prompt behind its system message and resolves the original', async () => {
    const store = await open();
    const result = await offloadLargeValues({ kind: 'llm', request, response }, store, THRESHOLD);
    const ref = `sha256/${digestOf(request.slice(1))}`;
    expect(result.draft.request).toEqual([system, { $payload: ref }]);
    expect(result.draft.response).toBe(response);
    expect(await store.has(ref)).toBe(true);
    expect(result.requestDigest).toBe(digestOf(request));

    const resolver = createPayloadResolver(store, { maxBytes: 8 * 1024 * KiB });
    expect(await resolver.resolve(result.draft.request)).toEqual(request);
    expect(resolver.resolvedPartial).toBe(false);
  });

  it('resolves a prefix of a tape holding more payload than the budget', async () => {
    const store = await open();
    const steps = [];
    for (const tag of ['a', 'b', 'c']) {
      const stepRequest = [{ role: 'user', content: `${tag}: ${prompt}` }];
      steps.push({
        original: stepRequest,
        stored: (await offloadLargeValues({ kind: 'llm', request: stepRequest, response: null }, store, THRESHOLD))
          .draft.request,
      });
    }
    const resolver = createPayloadResolver(store, { maxBytes: 700 * KiB });
    const resolved = [];
    for (const step of steps) resolved.push(await resolver.resolve(step.stored));
    expect(resolved).toEqual([steps[0].original, steps[1].original, steps[2].stored]);
    expect(resolver.resolvedPartial).toBe(true);
  });
});

it('stores the same form with the same digests on every backend', async () => {
  const seen: {
    name: string;
    stored: JsonValue | null;
    requestDigest: string | null;
    responseDigest: string | null;
  }[] = [];
  for (const [name, open] of backends) {
    const { draft, requestDigest, responseDigest } = await offloadLargeValues(
      { kind: 'llm', request, response },
      await open(),
      THRESHOLD,
    );
    seen.push({ name, stored: draft.request, requestDigest, responseDigest });
  }
  const [first, ...rest] = seen;
  expect(first.requestDigest).toMatch(/^[0-9a-f]{64}$/);
  for (const other of rest) expect({ ...other, name: first.name }, `${other.name} vs ${first.name}`).toEqual(first);
});
