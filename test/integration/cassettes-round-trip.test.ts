/**
 * Cassettes round trip on every corpus capture with full content (docs/cassettes.md). Each
 * capture is ingested through the ingest core into one store (PostgreSQL when
 * TAPEDECK_TEST_DATABASE_URL is set, else PGlite), every run is exported to a cassette file and
 * imported into a fresh PGlite store: the tapes read back identical there (steps, digests,
 * fingerprints, messages). Then the official `openai` and `@anthropic-ai/sdk` clients replay
 * each recorded run, plain and streamed, with its recorded requests, through three replays:
 * the original store's, the imported store's and one straight from the cassette file. All
 * three give the same answers (text, tool calls, finish, usage, model), their text and tool
 * calls are the recorded ones, and every recorded model step is served and matched. Importing the same file again writes nothing.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createReadRoutes } from '../../src/api/read-routes.js';
import { exportCassette } from '../../src/cassettes/export.js';
import { defaultCassetteLimits } from '../../src/cassettes/format.js';
import { importCassette } from '../../src/cassettes/import.js';
import { loadCassette } from '../../src/cassettes/load.js';
import { readCatalogRow } from '../../src/cassettes/catalog.js';
import { loadConfig } from '../../src/config.js';
import type { Store } from '../../src/open-store.js';
import { readTape } from '../../src/tapes/tape-service.js';
import { startCassetteServer } from '../../src/testing/cassette-server.js';
import { appWith } from '../helpers/app.js';
import { type CaptureRef, listCaptures } from '../helpers/corpus.js';
import { databaseKinds } from '../helpers/databases.js';
import type { RecordedCall } from '../fixtures/replay/harness.js';
import { anthropicClient, openAiClient } from '../fixtures/replay/sdk-runs.js';
import {
  ingestRecords,
  type LoadedCapture,
  loadCaptureRecords,
  openTestStore,
  type TestStore,
} from '../unit/runs/store-fixtures.js';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = any;

const sourceKind = databaseKinds.includes('postgres') ? 'postgres' : 'pglite';
let source: TestStore;
let target: TestStore;
let dir: string;
const servers: ServerType[] = [];
const captures: { ref: CaptureRef; records: LoadedCapture; runs: string[] }[] = [];

async function listen(store: Store): Promise<string> {
  const app = appWith(createReadRoutes(store, loadConfig({})));
  const server: ServerType = await new Promise((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function runsOf(store: Store): Promise<string[]> {
  const rows = await store.db.query<{ run: string }>(
    'SELECT DISTINCT run_id AS run FROM tapedeck_store.spans ORDER BY 1',
  );
  return rows.map((r) => r.run);
}

let sourceUrl: string;
let targetUrl: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-cassette-round-trip-'));
  source = await openTestStore(sourceKind);
  target = await openTestStore('pglite');
  for (const ref of listCaptures()) {
    const records = await loadCaptureRecords(ref);
    if (records.shortened) continue; // content not whole: nothing to compare
    const before = new Set(await runsOf(source.store));
    await ingestRecords(source.store, records);
    const runs = (await runsOf(source.store)).filter((r) => !before.has(r));
    captures.push({ ref, records, runs });
  }
  sourceUrl = await listen(source.store);
  targetUrl = await listen(target.store);
}, 240_000);

afterAll(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  await source?.drop();
  await target?.drop();
  rmSync(dir, { recursive: true, force: true });
});

const files = new Map<string, string>();

it('exports every run, imports it into a fresh PGlite store, and reads back identical tapes', async () => {
  expect(captures.length).toBeGreaterThan(20);
  let compared = 0;
  for (const { runs } of captures) {
    for (const run of runs) {
      const out = await exportCassette(source.store, '', run, { limits: defaultCassetteLimits });
      const file = path.join(dir, `${files.size}.tar`);
      writeFileSync(file, out.bytes);
      files.set(run, file);
      const loaded = await loadCassette(file, defaultCassetteLimits);
      const result = await importCassette(target.store, loaded);
      expect(result.catalog.runs).toEqual([{ run, stored_as: run }]);
      const a = await readTape(source.store, '', run, { resolve: true });
      const b = await readTape(target.store, '', run, { resolve: true });
      expect(b, run).toEqual(a);
      expect(b?.steps.length).toBeGreaterThan(0);
      compared++;
      // idempotent: the same file again writes nothing, and its catalog row is what the file says
      const again = await importCassette(target.store, loaded);
      expect([again.runs_written, again.steps_written]).toEqual([0, 0]);
      expect(await readCatalogRow(target.store.db, '', out.manifest.id)).toMatchObject({
        id: out.manifest.id,
        name: out.manifest.name,
        manifest_sha256: out.manifest.manifest_sha256,
        root_run: run,
      });
    }
  }
  expect(compared).toBeGreaterThan(20);
});

/** An answer's text and the names of the tools it calls: what every layout records whole. */
function textAndTools(sdk: 'openai' | 'anthropic', answer: Any): { text: string | null; tools: string[] } {
  if (sdk === 'anthropic') {
    const texts = answer.content.filter((b: Any) => b.type === 'text').map((b: Any) => b.text);
    return {
      text: texts.length ? texts.join('') : null,
      tools: answer.content.filter((b: Any) => b.type === 'tool_use').map((b: Any) => b.name),
    };
  }
  const message = answer.choices ? answer.choices[0].message : answer.message;
  return {
    text: message.content ?? null,
    tools: (message.tool_calls ?? []).map((c: Any) => c.function.name),
  };
}

/** The recorded model calls of a capture, in order, when the whole run can be replayed. */
function recordedCalls(c: (typeof captures)[number]): { sdk: 'openai' | 'anthropic'; calls: RecordedCall[] } | null {
  const g = c.records.groundTruth;
  const model = g.steps.filter((s) => s.type === 'model_call');
  if (g.content_capture === false || !c.runs.includes(g.session_id) || model.length === 0 || model.some((s) => s.error))
    return null;
  return {
    sdk: model[0].provider === 'anthropic' ? 'anthropic' : 'openai',
    calls: model.map((s) => ({ step: s.index, stream: Boolean(s.stream), request: s.request, response: s.response })),
  };
}

async function replayThrough(
  base: string,
  run: string,
  sdk: 'openai' | 'anthropic',
  calls: RecordedCall[],
  stream: boolean,
): Promise<{ outcomes: unknown[]; status: Any }> {
  let replay: Any;
  if (base.endsWith('.tar')) {
    const server = await startCassetteServer({ cassette: base });
    replay = { ...server.replay, close: server.close, origin: server.origin };
  } else {
    const res = await fetch(`${base}/v1/replays`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ run }),
    });
    expect(res.status, run).toBe(201);
    replay = await res.json();
    replay.origin = base;
    const absolute = (u: string) => (u.startsWith('/') ? `${base}${u}` : u);
    replay.base_urls = { openai: absolute(replay.base_urls.openai), anthropic: absolute(replay.base_urls.anthropic) };
  }
  try {
    const outcomes: unknown[] = [];
    for (const call of calls) {
      const { stream: _s, stream_options: _o, ...params } = call.request as Any;
      const answer: Any =
        sdk === 'openai'
          ? stream
            ? await openAiClient(replay.base_urls.openai)
                .chat.completions.stream({ ...params, stream: true, stream_options: { include_usage: true } })
                .finalChatCompletion()
            : await openAiClient(replay.base_urls.openai).chat.completions.create(params)
          : stream
            ? await anthropicClient(replay.base_urls.anthropic).messages.stream(params).finalMessage()
            : await anthropicClient(replay.base_urls.anthropic).messages.create(params);
      // the response id is made up from the replay's id; everything else is the recording's
      const { id: _id, ...rest } = answer;
      expect(JSON.stringify(rest).length).toBeGreaterThan(50);
      outcomes.push(rest);
    }
    const status = await (await fetch(`${replay.origin}/v1/replays/${replay.id}`)).json();
    return { outcomes, status };
  } finally {
    await replay.close?.();
  }
}

it('replays every run through the official SDKs alike from the original store, the imported store and the file', async () => {
  let replayed = 0;
  for (const c of captures) {
    const recorded = recordedCalls(c);
    if (!recorded) continue;
    const run = c.records.groundTruth.session_id;
    for (const stream of [false, true]) {
      const fromSource = await replayThrough(sourceUrl, run, recorded.sdk, recorded.calls, stream);
      const fromImport = await replayThrough(targetUrl, run, recorded.sdk, recorded.calls, stream);
      const fromFile = await replayThrough(files.get(run) as string, run, recorded.sdk, recorded.calls, stream);
      expect(fromImport.outcomes, `${run} stream=${stream}`).toEqual(fromSource.outcomes);
      expect(fromFile.outcomes, `${run} stream=${stream}`).toEqual(fromSource.outcomes);
      // and those are the recorded answers, not merely three alike
      expect(
        fromFile.outcomes.map((o) => textAndTools(recorded.sdk, o)),
        `${run} stream=${stream}`,
      ).toEqual(recorded.calls.map((call) => textAndTools(recorded.sdk, call.response)));
      for (const s of [fromSource, fromImport, fromFile]) {
        expect([s.status.served, s.status.remaining, s.status.diverged]).toEqual([recorded.calls.length, 0, null]);
        expect(s.status.calls.every((x: Any) => x.matched)).toBe(true);
      }
    }
    replayed++;
  }
  expect(replayed).toBeGreaterThan(10);
});
