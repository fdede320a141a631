/**
 * Test helper for the runs tests: a fresh store (database + memory payloads) of a given
 * kind, and corpus captures loaded into it through the ingest core, as the receivers do.
 */
import { loadConfig } from '../../../src/config.js';
import { ingestLogs, ingestSpans } from '../../../src/ingest/ingest.js';
import { silentLogger } from '../../../src/logger.js';
import { createMemoryPayloadStore } from '../../../src/payloads/memory-payload-store.js';
import type { LogRecord, SpanRecord } from '../../../src/spans/span-record.js';
import { openStore, type Store } from '../../../src/open-store.js';
import { loadCapture, recordsFromRaw, type CaptureRef, type GroundTruth } from '../../helpers/corpus.js';
import { createTestDatabase, type DatabaseKind } from '../../helpers/databases.js';

export interface TestStore {
  store: Store;
  drop(): Promise<void>;
}

/** A fresh, migrated database with an in-memory payload store; small offload threshold so offload is exercised. */
export async function openTestStore(
  kind: DatabaseKind,
  options: { payloadThresholdBytes?: number } = {},
): Promise<TestStore> {
  const test = await createTestDatabase(kind, { migrated: false });
  const config = { ...loadConfig({}), payloadThresholdBytes: options.payloadThresholdBytes ?? 4096 };
  const store = await openStore(config, silentLogger(), { db: test.db, payloads: createMemoryPayloadStore() });
  return { store, drop: () => test.drop() };
}

export interface LoadedCapture {
  spans: SpanRecord[];
  logs: LogRecord[];
  /** strings were shortened for display and the raw bodies are not kept: content is not whole */
  shortened: boolean;
  /** 'raw': decoded from the captured OTLP bodies with src/otlp/decode.ts */
  source: 'raw' | 'decoded.json';
  groundTruth: GroundTruth;
}

/** The captured OTLP bodies when the fixture keeps them all (the wire path), else decoded.json. */
export async function loadCaptureRecords(ref: CaptureRef): Promise<LoadedCapture> {
  const c = await loadCapture(ref);
  const raw = recordsFromRaw(ref.dir);
  if (raw) return { ...raw, shortened: false, source: 'raw', groundTruth: c.groundTruth };
  return { spans: c.spans, logs: c.logs, shortened: c.shortened, source: c.source, groundTruth: c.groundTruth };
}

export async function ingestRecords(
  store: Store,
  records: { spans: readonly SpanRecord[]; logs: readonly LogRecord[] },
  tenant = '',
): Promise<void> {
  await ingestLogs(records.logs, { tenant }, store.ingest);
  await ingestSpans(records.spans, { tenant }, store.ingest);
}

/** The tenant a capture is stored under when several share one store: `layout/scenario`. */
export const captureTenant = (ref: CaptureRef): string => `${ref.layout}/${ref.scenario}`;

/** Ingests each capture into a tenant of its own; returns the loaded captures by tenant. */
export async function ingestCapturesByTenant(
  store: Store,
  refs: readonly CaptureRef[],
): Promise<Map<string, LoadedCapture>> {
  const loaded = new Map<string, LoadedCapture>();
  for (const ref of refs) {
    const c = await loadCaptureRecords(ref);
    loaded.set(captureTenant(ref), c);
    await ingestRecords(store, c, captureTenant(ref));
  }
  return loaded;
}
