/**
 * @module cassettes/load
 * Opens a cassette for use (replay, import, verify): the archive audit (archive.ts), then
 * what the files say against what the manifest declares: each run's files present and no
 * other, steps and counts as declared, every blob referenced by a step and every referenced
 * blob present, and each frame's decoded size as declared and within the policy. The first
 * problem refuses the whole cassette, naming the file and the reason; nothing is used before
 * every check passed.
 */
import type { Step, Tape } from '../normalize/step.js';
import { readArchiveFile, type ReadArchive } from './archive.js';
import {
  blobPath,
  CassetteInvalid,
  type CassetteLimits,
  type Manifest,
  RAW_SPANS_FILE,
  RUN_FILES,
  roleOfPath,
  runDir,
} from './format.js';
import {
  decodedBytes,
  payloadRefsIn,
  readJsonFile,
  readJsonLines,
  type RunTiming,
  type SpanLine,
  spanOfLine,
  stepOfLine,
} from './run-files.js';

export interface CassetteRun {
  run: string;
  parentRun: string | null;
  steps: Step[];
  spans: SpanLine[];
  timing: RunTiming;
  /** OTLP JSON of the run's spans, when exported --with-spans */
  rawSpans: Buffer | null;
}

export interface LoadedCassette {
  manifest: Manifest;
  manifestSha256: string;
  sizeBytes: number;
  runs: CassetteRun[];
  /** payload bytes by reference ("sha256/<hex>") */
  blobs: Map<string, Buffer>;
}

export async function loadCassette(file: string, limits: CassetteLimits): Promise<LoadedCassette> {
  return checkCassette(await readArchiveFile(file, { limits, keepFiles: true }), limits);
}

export function checkCassette(archive: ReadArchive, limits: CassetteLimits): LoadedCassette {
  const { manifest: m, files } = archive;
  const byRun = new Map<number, Set<string>>();
  const blobs = new Map<string, Buffer>();
  for (const f of m.files) {
    const role = roleOfPath(f.path);
    if (role?.kind === 'run') {
      if (role.run >= m.runs.length)
        throw new CassetteInvalid(
          f.path,
          `refused: the manifest lists ${m.runs.length} runs, none at position ${role.run}`,
        );
      const set = byRun.get(role.run) ?? new Set<string>();
      set.add(role.file);
      byRun.set(role.run, set);
    } else if (role?.kind === 'blob') {
      blobs.set(role.ref, files.get(f.path) as Buffer);
    }
  }
  const referenced = new Set<string>();
  const runs = m.runs.map((r, position): CassetteRun => {
    const dir = runDir(position);
    const have = byRun.get(position) ?? new Set<string>();
    for (const name of RUN_FILES)
      if (!have.has(name))
        throw new CassetteInvalid(
          `${dir}/${name}`,
          'missing: every run needs it, and the manifest does not declare it',
        );
    if (have.has(RAW_SPANS_FILE) !== m.with_spans)
      throw new CassetteInvalid(
        `${dir}/${RAW_SPANS_FILE}`,
        m.with_spans
          ? 'missing: the manifest says the cassette holds raw spans'
          : 'refused: raw spans in a cassette exported without them',
      );
    const stepsFile = `${dir}/steps.jsonl`;
    const steps = readJsonLines(stepsFile, files.get(stepsFile) as Buffer).map((l, i) => stepOfLine(stepsFile, l, i));
    const count = (kind: string) => steps.filter((s) => s.kind === kind).length;
    if (steps.length !== r.steps || count('llm') !== r.llm_steps || count('tool') !== r.tool_steps)
      throw new CassetteInvalid(stepsFile, 'its steps are not the ones the manifest counts');
    for (const s of steps) {
      payloadRefsIn(s.request, referenced);
      payloadRefsIn(s.response, referenced);
    }
    const spansFile = `${dir}/spans.jsonl`;
    const spans = readJsonLines(spansFile, files.get(spansFile) as Buffer).map((l, i) => spanOfLine(spansFile, l, i));
    if (spans.length !== r.spans)
      throw new CassetteInvalid(spansFile, 'its spans are not the ones the manifest counts');
    const timingFile = `${dir}/timing.json`;
    const timing = readJsonFile(timingFile, files.get(timingFile) as Buffer) as unknown as RunTiming;
    if (typeof timing.run_start_ns !== 'bigint' || !Array.isArray(timing.steps))
      throw new CassetteInvalid(timingFile, 'needs "run_start_ns" and a list of "steps"');
    return {
      run: r.run,
      parentRun: r.parent_run,
      steps,
      spans,
      timing,
      rawSpans: m.with_spans ? (files.get(`${dir}/${RAW_SPANS_FILE}`) ?? null) : null,
    };
  });
  for (const ref of referenced)
    if (!blobs.has(ref))
      throw new CassetteInvalid(blobPath(ref), 'missing: a step references it and the manifest does not declare it');
  for (const ref of blobs.keys())
    if (!referenced.has(ref)) throw new CassetteInvalid(blobPath(ref), 'refused: no step references it');
  checkFrames(m, runs, blobs, limits);
  return { manifest: m, manifestSha256: m.manifest_sha256, sizeBytes: archive.sizeBytes, runs, blobs };
}

/** Each frame decodes to the size the manifest declares, and the manifest declares every frame. */
function checkFrames(
  m: Manifest,
  runs: readonly CassetteRun[],
  blobs: ReadonlyMap<string, Buffer>,
  limits: CassetteLimits,
): void {
  const declared = new Map(m.frames.map((f) => [`${f.run}/${f.step}`, f]));
  let count = 0;
  for (const [position, run] of runs.entries()) {
    for (const s of run.steps) {
      if (s.kind !== 'llm' && s.kind !== 'tool') continue;
      count++;
      const file = `${runDir(position)}/steps.jsonl`;
      const frame = declared.get(`${position}/${s.index}`);
      const size =
        s.kind === 'llm'
          ? decodedBytes(s.response, blobs)
          : decodedBytes(s.request, blobs) + decodedBytes(s.response, blobs);
      if (!frame || frame.kind !== s.kind)
        throw new CassetteInvalid(file, `step ${s.index} (${s.kind}) has no frame in the manifest`);
      if (size > limits.maxFrameBytes)
        throw new CassetteInvalid(
          file,
          `step ${s.index} (${s.kind}) decodes to ${size} bytes, over the ${limits.maxFrameBytes}-byte limit per frame`,
        );
      if (frame.decoded_bytes !== size)
        throw new CassetteInvalid(
          file,
          `step ${s.index} decodes to ${size} bytes, but the manifest declares ${frame.decoded_bytes}`,
        );
    }
  }
  if (count !== m.frames.length) throw new CassetteInvalid('cassette.json', 'it declares frames no step has');
}

/** A run of the cassette as the tape the replay proxy reads (references not resolved). */
export function tapeOfRun(c: LoadedCassette, run: string): Tape | undefined {
  const r = c.runs.find((x) => x.run === run);
  if (!r) return undefined;
  return {
    run: r.run,
    tenant: null,
    spans_examined: r.spans.length,
    truncated: false,
    steps: r.steps.map((s) => ({ ...s })),
  };
}
