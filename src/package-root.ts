/**
 * @module package-root
 * Locates files shipped beside the code (proto/, SQL migrations) whether the code runs
 * from src/ (tests) or from dist/src/ (the built CLI).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

export function packageRoot(): string {
  if (cached) return cached;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`tapedeck: cannot find package.json above ${fileURLToPath(import.meta.url)}`);
    dir = parent;
  }
  cached = dir;
  return dir;
}
