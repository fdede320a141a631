/**
 * @module cassettes/rename
 * Renaming a cassette: the name lives in its manifest, so a rename rewrites the manifest
 * and its hash (`manifest_sha256`) and keeps every other file byte for byte; the cassette id,
 * which hashes the other files, stays. The cassette is audited before and after.
 */
import { readArchiveBytes, readArchiveFile, writeArchive } from './archive.js';
import { CassetteInvalid, type CassetteLimits, type Manifest, renderManifest } from './format.js';

export const MAX_NAME_CHARS = 256;

export async function renameCassette(
  file: string,
  name: string,
  limits: CassetteLimits,
): Promise<{ bytes: Buffer; manifest: Manifest }> {
  if (name.trim() === '' || name.length > MAX_NAME_CHARS)
    throw new CassetteInvalid('cassette.json', `a name must be 1 to ${MAX_NAME_CHARS} characters`);
  const archive = await readArchiveFile(file, { limits, keepFiles: true });
  const { manifest_sha256: _old, ...rest } = archive.manifest;
  const manifestBytes = renderManifest({ ...rest, name });
  const files = archive.manifest.files.map((f) => ({ path: f.path, bytes: archive.files.get(f.path) as Buffer }));
  const bytes = await writeArchive(manifestBytes, files);
  const audited = await readArchiveBytes(bytes, { limits, keepFiles: false });
  return { bytes, manifest: audited.manifest };
}
