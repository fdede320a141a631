/**
 * @module cassettes/export
 * A stored run, or the run with every run it started (`tree`), written as one cassette
 * (docs/cassettes.md). What goes in is an allowlist, not a filter: the tapes' steps as the
 * tape serves them, each run's spans reduced to ids, names, times and status (span-lines),
 * the recorded timing of model steps, and the payload blobs the steps reference; with
 * `withSpans`, the raw spans as OTLP JSON without credential-like attributes. No credential,
 * tenant or database detail is written. The result is audited by the same reader every load
 * uses before it is handed out, so an export that would not load is never answered.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ApiError } from '../errors.js';
import { NORMALIZER_VERSION } from '../normalize/normalize.js';
import type { Step, Tape } from '../normalize/step.js';
import { packageRoot } from '../package-root.js';
import type { PayloadStore } from '../payloads/payload-store.js';
import type { Queryable } from '../store/database.js';
import { readTape } from '../tapes/tape-service.js';
import { type ArchiveFile, readArchiveBytes, writeArchive } from './archive.js';
import {
  blobPath,
  CASSETTE_SCHEMA_VERSION,
  type CassetteLimits,
  cassetteIdOf,
  type Manifest,
  type ManifestFile,
  type ManifestFrame,
  type ManifestRun,
  RAW_SPANS_FILE,
  renderManifest,
  runDir,
  sha256,
} from './format.js';
import { encodeOtlpJson } from './otlp-json.js';
import { decodedBytes, jsonLines, payloadRefsIn, type RunTiming, type SpanLine } from './run-files.js';
import { readRawSpans, readSpanLines, readTreeRuns } from './store-rows.js';

export interface ExportDeps {
  db: Queryable;
  payloads: PayloadStore;
}

export interface ExportOptions {
  tree?: boolean;
  withSpans?: boolean;
  /** defaults to the creation time */
  name?: string;
  limits: CassetteLimits;
  now?: () => Date;
}

export interface ExportedCassette {
  bytes: Buffer;
  manifest: Manifest;
}

/** Runs in a tree export, root included; past it the export is refused rather than cut. */
export const MAX_TREE_RUNS = 500;
/** Spans read per run: a longer run is refused rather than exported as its beginning. */
export const MAX_RUN_SPANS = 20_000;

const refused = (message: string) => new ApiError('cassette_refused', message);

let versionCache: string | undefined;
export function tapedeckVersion(): string {
  versionCache ??= String(JSON.parse(readFileSync(path.join(packageRoot(), 'package.json'), 'utf8')).version);
  return versionCache;
}

export async function exportCassette(
  deps: ExportDeps,
  tenant: string,
  root: string,
  options: ExportOptions,
): Promise<ExportedCassette> {
  const runs = options.tree ? await readTreeRuns(deps.db, tenant, root, MAX_TREE_RUNS) : [{ run: root, parent: null }];
  if (runs === null)
    throw refused(`run ${JSON.stringify(root)} has more than ${MAX_TREE_RUNS} runs in its tree; export fewer`);
  const files: ArchiveFile[] = [];
  const manifestRuns: ManifestRun[] = [];
  const frames: ManifestFrame[] = [];
  const blobs = new Map<string, Buffer>();
  let framesBytes = 0;

  for (const [position, { run, parent }] of runs.entries()) {
    const tape = await readTape(deps, tenant, run, { maxSpans: MAX_RUN_SPANS });
    if (!tape) {
      if (position === 0) throw new ApiError('not_found', `no run ${JSON.stringify(run)}`);
      continue;
    }
    if (tape.truncated)
      throw refused(
        `run ${JSON.stringify(run)} has more than ${MAX_RUN_SPANS} spans; it is not exported as its beginning`,
      );
    const spans = await readSpanLines(deps.db, tenant, run, MAX_RUN_SPANS);
    const dir = runDir(manifestRuns.length);
    for (const step of tape.steps) {
      for (const ref of [...payloadRefsIn(step.request), ...payloadRefsIn(step.response)]) {
        if (blobs.has(ref)) continue;
        const bytes = await deps.payloads.get(ref).catch(() => undefined);
        if (!bytes)
          throw refused(
            `run ${JSON.stringify(run)} step ${step.index} references payload ${ref}, which cannot be read`,
          );
        blobs.set(ref, Buffer.from(bytes));
      }
      const frame = frameOf(step, blobs);
      if (frame === null) continue;
      if (frame > options.limits.maxFrameBytes)
        throw refused(
          `run ${JSON.stringify(run)} step ${step.index} (${step.kind}) decodes to ${frame} bytes, over the ${options.limits.maxFrameBytes}-byte limit per frame`,
        );
      framesBytes += frame;
      frames.push({
        run: manifestRuns.length,
        step: step.index,
        kind: step.kind as 'llm' | 'tool',
        decoded_bytes: frame,
      });
    }
    if (framesBytes > options.limits.maxFramesBytes)
      throw refused(`the recorded frames decode to more than the ${options.limits.maxFramesBytes}-byte limit`);
    files.push({ path: `${dir}/steps.jsonl`, bytes: jsonLines(tape.steps) });
    files.push({ path: `${dir}/spans.jsonl`, bytes: jsonLines(spans.lines) });
    files.push({ path: `${dir}/timing.json`, bytes: jsonLines([timingOf(tape, spans.lines, spans.firstChunkNs)]) });
    if (options.withSpans) {
      const raw = await readRawSpans(deps.db, tenant, run, MAX_RUN_SPANS);
      files.push({ path: `${dir}/${RAW_SPANS_FILE}`, bytes: Buffer.from(`${JSON.stringify(encodeOtlpJson(raw))}\n`) });
    }
    manifestRuns.push({
      position: manifestRuns.length,
      run,
      parent_run: parent ?? spans.parentRun,
      steps: tape.steps.length,
      llm_steps: tape.steps.filter((s) => s.kind === 'llm').length,
      tool_steps: tape.steps.filter((s) => s.kind === 'tool').length,
      spans: spans.lines.length,
    });
  }
  for (const [ref, bytes] of [...blobs].sort(([a], [b]) => (a < b ? -1 : 1)))
    files.push({ path: blobPath(ref), bytes });

  const declared: ManifestFile[] = files.map((f) => ({ path: f.path, sha256: sha256(f.bytes), size: f.bytes.length }));
  const createdAt = (options.now?.() ?? new Date()).toISOString();
  const manifestBytes = renderManifest({
    schema_version: CASSETTE_SCHEMA_VERSION,
    id: cassetteIdOf(declared),
    name: options.name ?? createdAt,
    created_at: createdAt,
    tapedeck_version: tapedeckVersion(),
    normalizer_version: NORMALIZER_VERSION,
    root_run: root,
    with_spans: Boolean(options.withSpans),
    runs: manifestRuns,
    files: declared,
    frames,
  });
  const bytes = await writeArchive(manifestBytes, files);
  if (bytes.length > options.limits.maxCassetteBytes)
    throw refused(
      `the cassette would be ${bytes.length} bytes, over the ${options.limits.maxCassetteBytes}-byte limit`,
    );
  // The same audit every load applies: what would not load is never handed out.
  const audited = await readArchiveBytes(bytes, { limits: options.limits, keepFiles: false });
  return { bytes, manifest: audited.manifest };
}

/** A model answer's or tool record's size decoded (payloads inlined); null for other steps. */
function frameOf(step: Step, blobs: ReadonlyMap<string, Buffer>): number | null {
  if (step.kind === 'llm') return decodedBytes(step.response, blobs);
  if (step.kind === 'tool') return decodedBytes(step.request, blobs) + decodedBytes(step.response, blobs);
  return null;
}

function timingOf(tape: Tape, spans: readonly SpanLine[], firstChunkNs: ReadonlyMap<string, bigint>): RunTiming {
  const runStart = spans.length ? spans[0].start_ns : (tape.steps[0]?.start_ns ?? 0n);
  return {
    run_start_ns: runStart,
    steps: tape.steps
      .filter((s) => s.kind === 'llm')
      .map((s) => ({
        step: s.index,
        start_offset_ns: s.start_ns - runStart,
        duration_ns: s.duration_ns,
        first_chunk_ns: firstChunkNs.get(s.span_id) ?? null,
      })),
  };
}
