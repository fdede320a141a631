/**
 * @module cassettes/import
 * A cassette into a store, idempotently, in one transaction: its payload blobs (content
 * addressed, so a blob already there is the same blob), its runs' spans as the span lines
 * describe them, and its steps as recorded, so the tapes read back identical (steps, digests,
 * fingerprints, messages). A run keeps its id unless the store already holds a different run
 * under it; then it is stored as `<cassette id>/<run id>` (IMPORTED_RUN_PREFIX). Importing the
 * same cassette again finds its runs already there and writes nothing but its catalog row.
 *
 * Imported spans carry only what the span lines hold, plus the `tapedeck.cassette.id`
 * attribute; their steps were derived where the run was recorded, so `tapedeck reindex` leaves
 * them as they are (there are no attributes to derive them from again).
 */
import type { Database } from '../store/database.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { SpanRecord } from '../spans/span-record.js';
import { insertRows } from '../store/bulk-insert.js';
import type { DerivedSpan } from '../tapes/derived-span.js';
import { IMPORTED_FROM_CASSETTE, spanToRow, spanWriteColumns } from '../tapes/span-rows.js';
import { lockTraces, upsertSteps } from '../tapes/trace-store.js';
import { type CatalogRow, catalogRowOf, upsertCatalogRow } from './catalog.js';
import type { CassetteRun, LoadedCassette } from './load.js';

/** A run whose id the store already uses for another run is stored as `<cassette id>/<run id>`. */
export const importedRunId = (cassetteId: string, run: string): string => `${cassetteId}/${run}`;

export interface ImportDeps {
  db: Database;
  payloads: PayloadStore;
}

export interface ImportResult {
  catalog: CatalogRow;
  /** runs written now; 0 when the cassette was imported before */
  runs_written: number;
  steps_written: number;
}

export async function importCassette(deps: ImportDeps, c: LoadedCassette, tenant = ''): Promise<ImportResult> {
  for (const [ref, bytes] of c.blobs) {
    const stored = await deps.payloads.put(bytes, 'application/json');
    if (stored !== ref) throw new Error(`payload ${ref} was stored as ${stored}`);
  }
  const id = c.manifest.id;
  return deps.db.transaction(async (tx) => {
    await lockTraces(tx, [...new Set(c.runs.flatMap((r) => r.spans.map((s) => s.trace_id)))]);
    const storedAs = new Map<string, string>();
    const toWrite: CassetteRun[] = [];
    for (const r of c.runs) {
      let target = r.run;
      let state = await runState(tx, tenant, target, r);
      if (state === 'other') {
        target = importedRunId(id, r.run);
        state = await runState(tx, tenant, target, r);
        if (state === 'other') throw new Error(`the store already holds a different run ${JSON.stringify(target)}`);
      }
      storedAs.set(r.run, target);
      if (state === 'absent') toWrite.push(r);
    }
    let steps = 0;
    for (const r of toWrite) {
      const run = storedAs.get(r.run) as string;
      const parent = r.parentRun === null ? null : (storedAs.get(r.parentRun) ?? r.parentRun);
      const spans = r.spans.map((s) => spanToRow(tenant, spanRecordOf(s, id), run, parent).concat([run, parent]));
      await insertRows(tx, 'tapedeck_store.spans', spanWriteColumns, spans, 'ON CONFLICT DO NOTHING');
      const derived: DerivedSpan[] = r.steps.map((s) => ({
        ownRun: run,
        ownParentRun: parent,
        step: {
          traceId: s.trace_id,
          spanId: s.span_id,
          draft: {
            kind: s.kind,
            name: s.name,
            model: s.model,
            tool: s.tool,
            toolCallId: s.tool_call_id ?? null,
            status: s.status,
            request: s.request,
            response: s.response,
            tokens: s.tokens,
            params: s.params,
            layout: s.layout,
            costUsd: s.cost_usd,
          },
          requestDigest: s.request_digest,
          responseDigest: s.response_digest,
          fingerprint: s.fingerprint,
          normalizerVersion: c.manifest.normalizer_version,
        },
      }));
      await upsertSteps(tx, tenant, derived);
      steps += derived.length;
    }
    const catalog = catalogRowOf(c, storedAs);
    await upsertCatalogRow(tx, tenant, catalog);
    return { catalog, runs_written: toWrite.length, steps_written: steps };
  });
}

/** Whether the store holds nothing under this run id, this very run, or another run. */
async function runState(
  tx: { query: Database['query'] },
  tenant: string,
  runId: string,
  r: CassetteRun,
): Promise<'absent' | 'same' | 'other'> {
  const [row] = await tx.query<{ spans: string | number; ours: string | number }>(
    `SELECT count(*) AS spans,
            count(*) FILTER (WHERE (encode(trace_id, 'hex'), encode(span_id, 'hex')) IN
              (SELECT * FROM unnest($3::text[], $4::text[]))) AS ours
       FROM tapedeck_store.spans WHERE tenant = $1 AND run_id = $2`,
    [tenant, runId, r.spans.map((s) => s.trace_id), r.spans.map((s) => s.span_id)],
  );
  const spans = Number(row?.spans ?? 0);
  if (spans === 0) return 'absent';
  return Number(row.ours) === r.spans.length && spans === r.spans.length ? 'same' : 'other';
}

function spanRecordOf(s: CassetteRun['spans'][number], cassetteId: string): SpanRecord {
  return {
    traceId: s.trace_id,
    spanId: s.span_id,
    parentSpanId: s.parent_span_id,
    traceState: '',
    flags: 0,
    name: s.name,
    kind: s.kind as SpanRecord['kind'],
    startTimeUnixNano: s.start_ns,
    endTimeUnixNano: s.end_ns,
    attributes: { [IMPORTED_FROM_CASSETTE]: cassetteId },
    droppedAttributesCount: 0,
    events: [],
    droppedEventsCount: 0,
    links: [],
    droppedLinksCount: 0,
    status: { code: s.status as SpanRecord['status']['code'], message: '' },
    resource: s.service === null ? {} : { 'service.name': s.service },
    resourceDroppedAttributesCount: 0,
    scope: { name: '', version: '', attributes: {} },
    serviceName: s.service,
  };
}
