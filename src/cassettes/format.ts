/**
 * @module cassettes/format
 * The cassette format (docs/cassettes.md): which files a cassette may hold, its manifest
 * `cassette.json`, and the size policy. A cassette is a recorded run, or a run tree, as one
 * portable file that replays with no database. Everything here is pure: the archive reader
 * (archive.ts) and the semantic check (load.ts) apply it.
 *
 * The manifest declares every other file with its SHA-256 and size, and every recorded model
 * answer and tool record ("frame") with its decoded size, so growth is attributable to a file
 * or a step. It also carries its own hash (`manifest_sha256`, over the manifest without that
 * key), and must be written exactly as renderManifest writes it, so that no byte of it can
 * change unnoticed either.
 */
import { createHash } from 'node:crypto';
import { canonicalJson, renderJson } from '../json/canonical.js';
import type { JsonValue } from '../json/json-value.js';

/** The only schema version read: there is no older reader and no fallback. */
export const CASSETTE_SCHEMA_VERSION = 1;
export const MANIFEST_PATH = 'cassette.json';
/** The manifest itself is bounded before it is parsed. */
export const MAX_MANIFEST_BYTES = 16 * 1024 * 1024;

const MiB = 1024 * 1024;

/** The size policy; every figure is configurable. */
export interface CassetteLimits {
  /** one recorded model answer or tool record, decoded (offloaded payloads inlined) */
  maxFrameBytes: number;
  /** every frame of the cassette together, decoded */
  maxFramesBytes: number;
  /** the cassette file as a whole */
  maxCassetteBytes: number;
}

export const defaultCassetteLimits: Readonly<CassetteLimits> = Object.freeze({
  maxFrameBytes: 8 * MiB,
  maxFramesBytes: 256 * MiB,
  maxCassetteBytes: 384 * MiB,
});

/** Files of one run, under runs/<position>/ (run ids may hold any character, so they name no path). */
export const RUN_FILES = ['steps.jsonl', 'spans.jsonl', 'timing.json'] as const;
/** Only with --with-spans: the run's spans as OTLP JSON, credentials left out. */
export const RAW_SPANS_FILE = 'otlp-spans.json';

const RUN_FILE = /^runs\/(0|[1-9][0-9]{0,5})\/(steps\.jsonl|spans\.jsonl|timing\.json|otlp-spans\.json)$/;
const BLOB_FILE = /^blobs\/sha256\/([0-9a-f]{64})$/;

export type FileRole =
  | { kind: 'manifest' }
  | { kind: 'run'; run: number; file: string }
  | { kind: 'blob'; ref: string };

/** What a path in a cassette is, or null when no cassette may hold it. */
export function roleOfPath(p: string): FileRole | null {
  if (p === MANIFEST_PATH) return { kind: 'manifest' };
  const run = RUN_FILE.exec(p);
  if (run) return { kind: 'run', run: Number(run[1]), file: run[2] };
  const blob = BLOB_FILE.exec(p);
  if (blob) return { kind: 'blob', ref: `sha256/${blob[1]}` };
  return null;
}

/** Why a path could escape or confuse an extraction, or null when it is a plain relative path. */
export function unsafePathReason(p: string): string | null {
  if (p === '') return 'an empty path';
  if (p.startsWith('/') || /^[A-Za-z]:/.test(p)) return 'an absolute path';
  if (p.includes('\\')) return 'a backslash in the path';
  if (p.includes('\0')) return 'a NUL in the path';
  const parts = p.split('/');
  if (parts.includes('..')) return 'a path escaping the archive (..)';
  if (parts.some((s) => s === '' || s === '.')) return 'an empty or "." path segment';
  return null;
}

export const blobPath = (ref: string): string => `blobs/${ref}`;
export const runDir = (position: number): string => `runs/${position}`;

export interface ManifestRun {
  /** files of this run are under runs/<position>/ */
  position: number;
  run: string;
  /** the run that started this one, when it is in the cassette or was recorded */
  parent_run: string | null;
  steps: number;
  llm_steps: number;
  tool_steps: number;
  spans: number;
}

export interface ManifestFile {
  path: string;
  sha256: string;
  size: number;
}

export interface ManifestFrame {
  /** position of the run in `runs` */
  run: number;
  step: number;
  kind: 'llm' | 'tool';
  decoded_bytes: number;
}

export interface Manifest {
  schema_version: number;
  /** stable across renames: the hash of the files' hashes */
  id: string;
  name: string;
  created_at: string;
  tapedeck_version: string;
  normalizer_version: number;
  root_run: string;
  with_spans: boolean;
  runs: ManifestRun[];
  files: ManifestFile[];
  frames: ManifestFrame[];
  manifest_sha256: string;
}

export const sha256 = (bytes: Uint8Array | string): string => createHash('sha256').update(bytes).digest('hex');

/** The cassette id: the same files give the same id, whatever the name. */
export function cassetteIdOf(files: readonly ManifestFile[]): string {
  const lines = [...files].sort((a, b) => (a.path < b.path ? -1 : 1)).map((f) => `${f.path}\t${f.sha256}\t${f.size}\n`);
  return `cs_${sha256(lines.join('')).slice(0, 32)}`;
}

/** The hash a manifest carries: SHA-256 of its canonical JSON without `manifest_sha256`. */
export function manifestHash(m: Omit<Manifest, 'manifest_sha256'> | Manifest): string {
  const { manifest_sha256: _own, ...rest } = m as Manifest;
  return sha256(canonicalJson(rest as unknown as JsonValue));
}

/** The manifest's bytes: sorted keys, two-space indent, with its own hash set. */
export function renderManifest(m: Omit<Manifest, 'manifest_sha256'>): Buffer {
  const sealed: Manifest = { ...m, manifest_sha256: manifestHash(m) };
  return Buffer.from(`${renderJson(sealed, 2)}\n`, 'utf8');
}

/** A refusal naming the file and the reason. */
export class CassetteInvalid extends Error {
  constructor(
    readonly file: string,
    readonly reason: string,
  ) {
    super(`${file}: ${reason}`);
    this.name = 'CassetteInvalid';
  }
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isHex64 = (v: unknown): v is string => typeof v === 'string' && /^[0-9a-f]{64}$/.test(v);

/** Parses and checks the manifest's bytes: schema version first, then its shape, then its own hash. */
export function parseManifest(bytes: Buffer): Manifest {
  const fail = (reason: string) => new CassetteInvalid(MANIFEST_PATH, reason);
  let m: Record<string, unknown>;
  try {
    m = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw fail('not valid JSON');
  }
  if (typeof m !== 'object' || m === null || Array.isArray(m)) throw fail('not a JSON object');
  if (m.schema_version !== CASSETTE_SCHEMA_VERSION)
    throw fail(
      `schema version ${JSON.stringify(m.schema_version)} is not the current one (${CASSETTE_SCHEMA_VERSION}); no other is read`,
    );
  for (const k of ['id', 'name', 'created_at', 'tapedeck_version', 'root_run'])
    if (typeof m[k] !== 'string') throw fail(`"${k}" must be a string`);
  if (!isInt(m.normalizer_version)) throw fail('"normalizer_version" must be a whole number');
  if (typeof m.with_spans !== 'boolean') throw fail('"with_spans" must be true or false');
  if (!isHex64(m.manifest_sha256)) throw fail('"manifest_sha256" must be 64 hex digits');
  if (!Array.isArray(m.runs) || m.runs.length === 0) throw fail('"runs" must be a non-empty list');
  m.runs.forEach((r: Record<string, unknown>, i: number) => {
    if (typeof r !== 'object' || r === null || r.position !== i || typeof r.run !== 'string')
      throw fail(`runs[${i}] must have "position": ${i} and a "run" id`);
    if (r.parent_run !== null && typeof r.parent_run !== 'string')
      throw fail(`runs[${i}].parent_run must be a string or null`);
    for (const k of ['steps', 'llm_steps', 'tool_steps', 'spans'])
      if (!isInt(r[k])) throw fail(`runs[${i}].${k} must be a whole number`);
  });
  if (!Array.isArray(m.files)) throw fail('"files" must be a list');
  for (const [i, f] of (m.files as Record<string, unknown>[]).entries()) {
    if (typeof f?.path !== 'string' || !isHex64(f.sha256) || !isInt(f.size))
      throw fail(`files[${i}] must have "path", "sha256" (64 hex digits) and "size"`);
  }
  if (!Array.isArray(m.frames)) throw fail('"frames" must be a list');
  for (const [i, f] of (m.frames as Record<string, unknown>[]).entries()) {
    if (!isInt(f?.run) || !isInt(f.step) || (f.kind !== 'llm' && f.kind !== 'tool') || !isInt(f.decoded_bytes))
      throw fail(`frames[${i}] must have "run", "step", "kind" (llm or tool) and "decoded_bytes"`);
  }
  const manifest = m as unknown as Manifest;
  if (manifestHash(manifest) !== manifest.manifest_sha256)
    throw fail('its content does not match its manifest_sha256 (the manifest was changed)');
  if (!renderManifest(manifest).equals(bytes))
    throw fail('its bytes are not the form tapedeck writes (sorted keys, two-space indent): it was edited');
  if (cassetteIdOf(manifest.files) !== manifest.id) throw fail('its id does not match its files');
  return manifest;
}

/** Checks the declared frame sizes against the policy, before anything is expanded. */
export function checkFramePolicy(m: Manifest, limits: CassetteLimits): void {
  let total = 0;
  for (const f of m.frames) {
    if (f.decoded_bytes > limits.maxFrameBytes) {
      const run = m.runs[f.run]?.run ?? `#${f.run}`;
      throw new CassetteInvalid(
        `${runDir(f.run)}/steps.jsonl`,
        `run ${JSON.stringify(run)} step ${f.step} (${f.kind}) decodes to ${f.decoded_bytes} bytes, over the ${limits.maxFrameBytes}-byte limit per frame`,
      );
    }
    total += f.decoded_bytes;
  }
  if (total > limits.maxFramesBytes)
    throw new CassetteInvalid(
      MANIFEST_PATH,
      `the recorded frames decode to ${total} bytes together, over the ${limits.maxFramesBytes}-byte limit`,
    );
}
