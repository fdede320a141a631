/**
 * The allowlist audit and size policy on every load (docs/cassettes.md). A cassette exported
 * from a real store (a corpus capture whose prompt is offloaded, so a blob is in it) is
 * tampered with in each way a bad or hostile file can be, and each is refused by name,
 * before anything is imported or any replay starts: `loadCassette` (what import, verify and
 * replay all open) throws a CassetteInvalid naming the file and the reason, and the cassette
 * server never listens.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tar from 'tar-stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportCassette } from '../../../src/cassettes/export.js';
import {
  CassetteInvalid,
  defaultCassetteLimits,
  MANIFEST_PATH,
  type Manifest,
  renderManifest,
} from '../../../src/cassettes/format.js';
import { loadCassette } from '../../../src/cassettes/load.js';
import { renameCassette } from '../../../src/cassettes/rename.js';
import { startCassetteServer } from '../../../src/testing/cassette-server.js';
import { ingestCaptures } from '../../helpers/cli.js';
import { openTestStore, type TestStore } from '../runs/store-fixtures.js';

const RUN = 'sess-openllmetry-openai-big-prompt';
let dir: string;
let original: Buffer;
let entries: { name: string; bytes: Buffer }[];
let t: TestStore;

interface RawEntry {
  name: string;
  bytes?: Buffer;
  type?: 'file' | 'symlink' | 'directory';
  linkname?: string;
}

async function tarOf(list: readonly RawEntry[]): Promise<Buffer> {
  const pack = tar.pack();
  const chunks: Buffer[] = [];
  const done = (async () => {
    for await (const c of pack) chunks.push(c as Buffer);
  })();
  for (const e of list) {
    await new Promise<void>((resolve, reject) =>
      e.type && e.type !== 'file'
        ? pack.entry({ name: e.name, type: e.type, linkname: e.linkname }, (err) => (err ? reject(err) : resolve()))
        : pack.entry({ name: e.name, size: e.bytes?.length ?? 0 }, e.bytes ?? Buffer.alloc(0), (err) =>
            err ? reject(err) : resolve(),
          ),
    );
  }
  pack.finalize();
  await done;
  return Buffer.concat(chunks);
}

async function entriesOf(bytes: Buffer): Promise<{ name: string; bytes: Buffer }[]> {
  const out: { name: string; bytes: Buffer }[] = [];
  const extract = tar.extract();
  const reading = (async () => {
    for await (const e of extract) {
      const parts: Buffer[] = [];
      for await (const c of e) parts.push(c as Buffer);
      out.push({ name: e.header.name, bytes: Buffer.concat(parts) });
    }
  })();
  extract.end(bytes);
  await reading;
  return out;
}

let counter = 0;
function fileWith(bytes: Buffer): string {
  const f = path.join(dir, `c${counter++}.tar`);
  writeFileSync(f, bytes);
  return f;
}

/** The refusal loading this file throws, after checking no replay starts from it either. */
async function refusalOf(bytes: Buffer, limits = defaultCassetteLimits): Promise<CassetteInvalid> {
  const file = fileWith(bytes);
  const error = await loadCassette(file, limits).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(CassetteInvalid);
  await expect(startCassetteServer({ cassette: file, limits })).rejects.toBeInstanceOf(CassetteInvalid);
  return error as CassetteInvalid;
}

const manifestOf = (): Manifest => JSON.parse(entries[0].bytes.toString('utf8'));

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'tapedeck-cassette-tamper-'));
  t = await openTestStore('pglite');
  await ingestCaptures(t.store, ['openllmetry-openai/big-prompt']);
  original = (await exportCassette(t.store, '', RUN, { limits: defaultCassetteLimits })).bytes;
  entries = await entriesOf(original);
});
afterAll(async () => {
  await t?.drop();
  rmSync(dir, { recursive: true, force: true });
});

it('loads the untouched export, which holds a manifest, the run files and a referenced blob', async () => {
  const loaded = await loadCassette(fileWith(original), defaultCassetteLimits);
  expect(loaded.runs[0].run).toBe(RUN);
  expect(entries.map((e) => e.name)).toEqual([
    MANIFEST_PATH,
    'runs/0/steps.jsonl',
    'runs/0/spans.jsonl',
    'runs/0/timing.json',
    ...[...loaded.blobs.keys()].map((ref) => `blobs/${ref}`),
  ]);
  expect(loaded.blobs.size).toBeGreaterThan(0);
});

describe('flipping one byte of any file refuses the cassette, naming that file', () => {
  it.each([0, 1, 2, 3, 4])('file %i', async (i) => {
    if (i >= entries.length) return;
    const e = entries[i];
    for (const at of [0, e.bytes.length - 2]) {
      const flipped = Buffer.from(e.bytes);
      flipped[at] ^= 0x01;
      const error = await refusalOf(
        await tarOf(entries.map((x, j) => (j === i ? { name: x.name, bytes: flipped } : x))),
      );
      expect(error.file).toBe(e.name);
    }
  });
});

describe('an unknown file is refused by name', () => {
  it.each(['store.sqlite', 'debug.log', 'credentials.json', 'runs/0/notes.txt', 'blobs/sha256/abc'])(
    '%s',
    async (name) => {
      const error = await refusalOf(await tarOf([...entries, { name, bytes: Buffer.from('x') }]));
      expect(error.file).toBe(name);
      expect(error.reason).toMatch(/refused/);
    },
  );

  it('a recognised path the manifest does not declare', async () => {
    const error = await refusalOf(
      await tarOf([...entries, { name: 'runs/0/otlp-spans.json', bytes: Buffer.from('{}') }]),
    );
    expect(error.message).toBe('runs/0/otlp-spans.json: refused: not declared in the manifest');
  });
});

it('a declared file that is missing is refused by name', async () => {
  for (const i of [1, 4]) {
    const error = await refusalOf(await tarOf(entries.filter((_, j) => j !== i)));
    expect(error.file).toBe(entries[i].name);
    expect(error.reason).toMatch(/^missing/);
  }
});

it('paths escaping the archive and links are refused', async () => {
  for (const name of ['../evil', 'runs/../../etc/passwd', '/etc/passwd']) {
    const error = await refusalOf(await tarOf([...entries, { name, bytes: Buffer.from('x') }]));
    expect(error.file).toBe(name);
    expect(error.reason).toMatch(/absolute|escaping/);
  }
  const link = await refusalOf(
    await tarOf([...entries, { name: 'runs/0/link', type: 'symlink', linkname: '/etc/passwd' }]),
  );
  expect(link.message).toMatch(/^runs\/0\/link: refused: a symlink entry/);
  const dirEntry = await refusalOf(await tarOf([entries[0], { name: 'runs', type: 'directory' }, ...entries.slice(1)]));
  expect(dirEntry.reason).toMatch(/directory/);
});

it('a manifest with another schema version is refused, even when re-sealed', async () => {
  const { manifest_sha256: _h, ...m } = manifestOf();
  const error = await refusalOf(
    await tarOf([{ name: MANIFEST_PATH, bytes: renderManifest({ ...m, schema_version: 2 }) }, ...entries.slice(1)]),
  );
  expect(error.file).toBe(MANIFEST_PATH);
  expect(error.reason).toMatch(/schema version 2 is not the current one \(1\)/);
});

it('a manifest that declares a wrong size is refused before the file is read', async () => {
  const { manifest_sha256: _h, ...m } = manifestOf();
  const files = m.files.map((f, i) => (i === 0 ? { ...f, size: f.size + 1 } : f));
  const resealed = renderManifest({ ...m, files });
  const error = await refusalOf(await tarOf([{ name: MANIFEST_PATH, bytes: resealed }, ...entries.slice(1)]));
  // the id hashes the files list, so a changed list no longer matches it
  expect(error.file).toBe(MANIFEST_PATH);
});

it('a frame over the size limit is refused naming the run file and the step', async () => {
  const m = manifestOf();
  const biggest = [...m.frames].sort((a, b) => b.decoded_bytes - a.decoded_bytes)[0];
  const limits = { ...defaultCassetteLimits, maxFrameBytes: biggest.decoded_bytes - 1 };
  const error = await refusalOf(original, limits);
  expect(error.file).toBe('runs/0/steps.jsonl');
  expect(error.reason).toContain(`step ${biggest.step} (${biggest.kind}) decodes to ${biggest.decoded_bytes} bytes`);
  const total = await refusalOf(original, { ...defaultCassetteLimits, maxFramesBytes: 10 });
  expect(total.reason).toMatch(/frames decode to \d+ bytes together/);
  const whole = await refusalOf(original, { ...defaultCassetteLimits, maxCassetteBytes: original.length - 1 });
  expect(whole.reason).toMatch(/over the \d+-byte limit per cassette/);
});

it('a rename rewrites the name and the manifest hash, and keeps the id and every other file', async () => {
  const file = fileWith(original);
  const before = manifestOf();
  const renamed = await renameCassette(file, 'nightly regression', defaultCassetteLimits);
  expect(renamed.manifest.name).toBe('nightly regression');
  expect(renamed.manifest.id).toBe(before.id);
  expect(renamed.manifest.manifest_sha256).not.toBe(before.manifest_sha256);
  const after = await entriesOf(renamed.bytes);
  expect(after.slice(1)).toEqual(entries.slice(1));
  const loaded = await loadCassette(fileWith(renamed.bytes), defaultCassetteLimits);
  expect(loaded.manifest.name).toBe('nightly regression');
  expect(readFileSync(file).equals(original)).toBe(true);
});
